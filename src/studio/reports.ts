/** The Auto Director's verdict and evidence, and the adaptive glyph codebook, as DOM. */
import type { CodebookReport, DirectorReport } from '../core/index.js';
import { h, num } from './dom.js';

function meter(label: string, value: number, max = 1, mark?: number, id?: string): HTMLElement {
  const pct = Math.max(0, Math.min(100, (value / max) * 100));
  const bar = h('div', { class: 'bar' }, h('span', { class: 'bar-fill' }));
  (bar.firstChild as HTMLElement).style.width = `${pct}%`;
  if (mark !== undefined) {
    const m = h('span', { class: 'bar-mark', title: `threshold ${num(mark)}` });
    m.style.left = `${Math.max(0, Math.min(100, (mark / max) * 100))}%`;
    bar.append(m);
  }
  return h('div', { class: 'metric', role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': max, 'aria-valuenow': num(value), 'aria-label': label, ...(id ? { id } : {}) },
    h('span', { class: 'metric-name', text: label }), bar, h('span', { class: 'metric-value', text: num(value) }));
}

export function renderDirector(d: DirectorReport): HTMLElement {
  const met = d.status === 'target_met';
  const head = h('div', { class: 'verdict' },
    h('span', { class: `pill ${met ? 'ok' : 'warn'}`, 'data-status': d.status, text: met ? 'target met' : 'best effort' }),
    h('span', { class: 'verdict-text' }, 'rubric ', h('b', { text: d.rubric }), ` · score ${num(d.score)} / ${num(d.threshold)}`),
  );
  const score = meter('score', d.score, 1, d.threshold, 'director-score');
  const metrics = h('div', { class: 'metrics' }, ...Object.entries(d.metrics).map(([k, v]) => meter(k, v)));
  const adj = Object.entries(d.adjustments);
  const adjustments = adj.length
    ? h('table', { class: 'adjustments' },
      h('caption', { class: 'sr-only', text: 'Adjustments made by the Auto Director' }),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'tuned' }), h('th', { scope: 'col', text: 'from' }), h('th', { scope: 'col', text: 'to' }))),
      h('tbody', {}, ...adj.map(([k, v]) => h('tr', {}, h('th', { scope: 'row', text: k }), h('td', { text: num(v.from) }), h('td', { text: num(v.to) })))))
    : h('p', { class: 'muted', text: d.strength === 0 ? 'Tuning is off (autoOptimize 0).' : 'No adjustments: your settings already serve the rubric, or you set them all.' });
  const source = h('details', { class: 'source' }, h('summary', { text: 'Source measurements' }),
    h('dl', {}, ...Object.entries(d.source).flatMap(([k, v]) => [h('dt', { text: k }), h('dd', { text: num(v) })])));
  return h('div', {}, head, score, h('h3', { text: 'Metrics' }), metrics, h('h3', { text: 'Adjustments' }), adjustments, source);
}

export function renderCodebook(c: CodebookReport): HTMLElement {
  const glyphs = h('div', { class: 'glyphs', 'aria-label': `Codebook glyphs: ${c.glyphs}` },
    ...[...c.glyphs].map((g) => h('span', { class: g === ' ' || g === '\u2800' ? 'glyph blank' : 'glyph', title: g === ' ' ? 'space' : `${g} U+${g.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`, text: g })));
  return h('div', {},
    h('p', { class: 'codebook-head' },
      h('b', { text: `${c.size}` }), ` of ${c.rampSize} glyphs · ${c.strategy} · ${num(c.bitsPerCell, 2)} bits/cell`),
    glyphs,
    meter(`RMSE ≤ ${num(c.maxRmse)}`, c.rmse, Math.max(c.maxRmse * 1.5, c.rmse), c.maxRmse, 'codebook-rmse'),
    h('p', { class: 'muted small', text: `Measured luminance RMSE ${num(c.rmse, 5)} against the budget maxGlyphRmse ${num(c.maxRmse)}.` }),
  );
}
