import { parseAccept } from 'hono/utils/accept';

/**
 * Content negotiation for the few operations that answer more than one media type (QR codes, downloads,
 * dongle dumps). The Accept header is parsed by Hono's parser (the one `hono/accepts` uses); the choice is
 * made here rather than by `hono/accepts`'s default matcher, which never lets `*\/*` match and so, for
 * `image/svg+xml;q=0.5, *\/*`, would answer the SVG the client ranked below anything else.
 *
 * Each offer takes the q-value of the most specific range that names it (exact type, then `type/*`, then
 * `*\/*`, as RFC 9110 12.5.1 says); the highest q wins, then the offer named more specifically, then the
 * earlier offer. An offer whose most specific range has q=0 is not acceptable.
 */

/** How specifically a range names an offer: 2 exactly, 1 by `type/*`, 0 by `*\/*`; -1 not at all. */
function specificity(range: string, offer: string): number {
  if (range === offer) return 2;
  if (range === `${offer.split('/')[0]}/*`) return 1;
  return range === '*/*' || range === '*' ? 0 : -1;
}

/**
 * The offered media type the Accept header ranks highest; the first offer (the default) when the header is
 * absent or accepts none of them.
 *
 * @example
 * preferredType('image/svg+xml, image/png;q=0.5', ['image/png', 'image/svg+xml']); // 'image/svg+xml'
 * preferredType(null, ['image/png', 'image/svg+xml']); // 'image/png'
 */
export function preferredType<T extends string>(accept: string | null | undefined, offers: readonly [T, ...T[]]): T {
  if (!accept) return offers[0];
  const ranges = parseAccept(accept).map((r) => ({ type: r.type.toLowerCase(), q: r.q }));
  let best = offers[0];
  let bestQ = 0;
  let bestSpecificity = -1;
  for (const offer of offers) {
    let q = 0;
    let specific = -1;
    for (const range of ranges) {
      const s = specificity(range.type, offer);
      if (s > specific) [q, specific] = [range.q, s];
    }
    if (q > bestQ || (q === bestQ && q > 0 && specific > bestSpecificity))
      [best, bestQ, bestSpecificity] = [offer, q, specific];
  }
  return best;
}
