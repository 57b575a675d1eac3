// The picture `npm run eval -- --plot file.svg` writes: the DET curve and the score histograms of one run.
import type { Calibration } from '../../biometrics/calibration.js';

/** DET curve (FNMR vs FMR, log axes) and score histograms as one SVG. */
export function plotSvg(gen: number[], imp: number[], cal: Calibration, title: string): string {
  const W = 900,
    H = 380;
  const bins = 50;
  const hist = (xs: number[]) => {
    const h = new Array(bins).fill(0);
    for (const x of xs) h[Math.min(bins - 1, Math.max(0, Math.floor(((x + 0.4) / 1.4) * bins)))]++;
    return h.map((v) => v / Math.max(1, xs.length));
  };
  const hg = hist(gen),
    hi = hist(imp);
  const maxH = Math.max(...hg, ...hi, 1e-9);
  const bw = 400 / bins;
  const bars = (h: number[], color: string) =>
    h
      .map(
        (v, i) =>
          `<rect x="${(40 + i * bw).toFixed(1)}" y="${(320 - (v / maxH) * 260).toFixed(1)}" width="${bw.toFixed(1)}" height="${((v / maxH) * 260).toFixed(1)}" fill="${color}" fill-opacity="0.55"/>`,
      )
      .join('');
  // DET: x = log10 FMR in [-5, 0], y = log10 FNMR in [-4, 0]
  const thresholds = [...new Set([...gen, ...imp])].sort((a, b) => a - b);
  const gs = [...gen].sort((a, b) => a - b),
    is = [...imp].sort((a, b) => a - b);
  const pts: string[] = [];
  let gi = 0,
    ii = 0;
  for (const t of thresholds) {
    while (gi < gs.length && gs[gi] < t) gi++;
    while (ii < is.length && is[ii] < t) ii++;
    const fmr = (is.length - ii) / is.length;
    const fnmr = gi / gs.length;
    const x = 500 + ((Math.log10(Math.max(fmr, 1e-5)) + 5) / 5) * 360;
    const y = 60 + (-Math.log10(Math.max(fnmr, 1e-4)) / 4) * 260;
    pts.push(`${x.toFixed(1)},${y.toFixed(1)}`);
  }
  const ticks = [0.3, 0.5, 0.7]
    .map(
      (c) =>
        `<text x="${40 + ((c + 0.4) / 1.4) * 400}" y="${H - 30}" font-size="10">cos ${c} = score ${cal.cosineToScore(c).toFixed(0)}</text>`,
    )
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">
<text x="20" y="25" font-size="14">${title}</text>
<text x="40" y="50" font-size="12">Cosine histogram: <tspan fill="green">genuine (${gen.length})</tspan>, <tspan fill="red">impostor (${imp.length})</tspan></text>
${bars(hi, 'red')}${bars(hg, 'green')}
<line x1="40" y1="320" x2="440" y2="320" stroke="black"/><text x="40" y="335" font-size="10">-0.4</text><text x="420" y="335" font-size="10">1.0</text>
${ticks}
<text x="500" y="50" font-size="12">DET: FNMR (down to 1e-4) vs FMR (1e-5 .. 1), log scales</text>
<rect x="500" y="60" width="360" height="260" fill="none" stroke="black"/>
<polyline points="${pts.join(' ')}" fill="none" stroke="blue" stroke-width="2"/>
<text x="500" y="335" font-size="10">1e-5</text><text x="850" y="335" font-size="10">1</text>
</svg>`;
}
