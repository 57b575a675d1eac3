/**
 * The shards a `bims matcher` process holds, from its `--shards` option (every shard when absent), or a message
 * saying what is wrong with the option.
 */
export function heldShards(args: string[], shards: number): number[] | string {
  const at = args.indexOf('--shards');
  const value = at >= 0 ? args[at + 1] : 'all';
  if (value === undefined) return '--shards needs a value (e.g. 0,1 or all)';
  if (value === 'all') return Array.from({ length: shards }, (_, s) => s);
  const held = [...new Set(value.split(',').map((v) => (/^\d+$/.test(v) ? Number(v) : Number.NaN)))];
  const bad = held.find((s) => !Number.isInteger(s) || s >= shards);
  if (bad !== undefined || held.length === 0)
    return `--shards ${value}: give shard numbers 0..${shards - 1} (BIMS_MATCHER_SHARDS=${shards}), comma-separated`;
  return held.sort((a, b) => a - b);
}
