import { definitionOf, settingKeys } from './registry.js';

/**
 * The defaults of every biometric operation property (the registry's `operation` settings), with type and
 * range, for `getDefaultProperties`. Defaults, not effective values: clients use them to show what "reset"
 * would give and to validate their own per-request overrides.
 */
export function defaultProperties() {
  return settingKeys
    .map((key) => ({ key, definition: definitionOf(key) }))
    .filter(({ definition }) => definition.scope === 'operation')
    .map(({ key, definition: d }) => ({
      key,
      type: d.type,
      default: d.default,
      ...(d.minimum !== undefined ? { minimum: d.minimum, maximum: d.maximum } : {}),
      ...(d.allowedValues ? { allowedValues: [...d.allowedValues] } : {}),
      ...(d.unit ? { unit: d.unit } : {}),
      description: d.description,
    }));
}
