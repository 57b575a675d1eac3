/**
 * The version of the face templates this build makes, as management info reports it.
 *
 * A placeholder: the face engine has not been wired into the services yet, so no template is made and the
 * version is 'none'. When the face engine lands, replace this with the version its model manifest names, so
 * that info, stored templates and re-extraction all agree.
 */
export const CURRENT_FACE_TEMPLATE_VERSION: string = 'none';
