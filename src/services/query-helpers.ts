/** Map a validated `sort` ({field, direction}) to a column through an allow-list. */
export function sortColumn<M extends Record<string, string>>(
  columns: M,
  sort: { field: keyof M & string; direction: 'asc' | 'desc' } | undefined,
  fallback: keyof M & string,
): [M[keyof M], 'asc' | 'desc'] {
  const field = sort?.field ?? fallback;
  return [columns[field] as M[keyof M], sort?.direction ?? 'asc'];
}
