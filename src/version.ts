/** The service's version, reported by management info and the OpenAPI documents. */
export const VERSION = '0.1.0';
