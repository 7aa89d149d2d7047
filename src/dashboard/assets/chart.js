// A small bar chart in inline SVG: requests per hour. No library; scales to its container.

import { s, num } from './dom.js';

const W = 1160;
const H = 220;
const PAD = { top: 12, right: 8, bottom: 24, left: 44 };

/**
 * A round axis maximum ≥ max: 1, 2, 5 × 10^n.
 * @param {number} max
 */
function niceMax(max) {
  if (max <= 4) return 4;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

/**
 * points: [{ label, title, value }] in time order ('' label: none under that bar). Returns an <svg>; each bar has a <title>
 * (the browser's tooltip) so exact numbers are a hover away.
 * @param {{ label: string, title: string, value: number }[]} points
 * @param {{ caption?: string }} [options]
 */
export function barChart(points, { caption = 'Requests per hour' } = {}) {
  const max = niceMax(Math.max(0, ...points.map((p) => p.value)));
  const iw = W - PAD.left - PAD.right;
  const ih = H - PAD.top - PAD.bottom;
  const step = iw / Math.max(points.length, 1);
  const bw = Math.max(1, step * 0.72);
  const y = (/** @type {number} */ v) => PAD.top + ih - (v / max) * ih;

  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const v = Math.round(max * f);
    return s(
      'g',
      { class: 'grid' },
      s('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v) }),
      s('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end', text: num(v) }),
    );
  });

  const bars = points.map((p, i) => {
    const x = PAD.left + i * step + (step - bw) / 2;
    const top = y(p.value);
    return s(
      'g',
      { class: 'bar' },
      s(
        'rect',
        { x, y: top, width: bw, height: Math.max(0, PAD.top + ih - top), rx: 1.5 },
        s('title', { text: `${p.title}: ${num(p.value)} request${p.value === 1 ? '' : 's'}` }),
      ),
      p.label
        ? s('text', { class: 'xlabel', x: x + bw / 2, y: H - 6, 'text-anchor': 'middle', text: p.label })
        : null,
    );
  });

  return s(
    'svg',
    {
      class: 'chart',
      viewBox: `0 0 ${W} ${H}`,
      role: 'img',
      'aria-label': `${caption}, maximum ${num(Math.max(0, ...points.map((p) => p.value)))}`,
    },
    grid,
    s('line', { class: 'axis', x1: PAD.left, x2: W - PAD.right, y1: PAD.top + ih, y2: PAD.top + ih }),
    bars,
  );
}
