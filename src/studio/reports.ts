/** The Auto Director's verdict and evidence, and the adaptive glyph codebook, as DOM. */
import type { CodebookReport, DirectorReport } from '../core/index.js';
import { codebookNote } from './codebook-note.js';
import { h, num } from './dom.js';
import { labelOf, measureLabelOf, valueLabelOf } from './labels.js';

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

/**
 * The Director's verdict in plain words first (how the art looks, what was tuned), the numbers
 * folded below for those who want them. `inkCoverage`: the share of cells that carry ink, so a
 * nearly empty render is called what it is even when the rubric's score passes.
 */
export function renderDirector(d: DirectorReport, inkCoverage: number | null = null): HTMLElement {
  const met = d.status === 'target_met';
  const faint = inkCoverage !== null && inkCoverage < 0.03;
  const rubric = valueLabelOf('qualityTarget', d.rubric).toLowerCase();
  const tuned = Object.keys(d.adjustments).map(labelOf);
  const headline = faint
    ? 'Almost nothing is drawn: try more contrast, brightness, or the other ground.'
    : met
      ? `Looks right for ${rubric}: detail and tone are where they should be.`
      : `Best effort for ${rubric}: this picture is hard to draw in characters; a wider width or another style may help.`;
  const tuning = d.strength === 0
    ? 'Auto-tuning is off.'
    : tuned.length
      ? `Auto-tuned: ${tuned.join(', ').toLowerCase()}.`
      : 'Nothing needed tuning.';
  const head = h('div', { class: 'verdict' },
    h('span', { class: `pill ${met && !faint ? 'ok' : 'warn'}`, 'data-status': d.status, text: faint ? 'faint' : met ? 'good' : 'best effort' }),
    h('p', { class: 'verdict-text', text: headline }),
  );
  const score = meter('score', d.score, 1, d.threshold, 'director-score');
  // In words, as the adjustments are (dynamicRange -> Dynamic range); the API's names stay in the json.
  const metrics = h('div', { class: 'metrics' }, ...Object.entries(d.metrics).map(([k, v]) => meter(measureLabelOf(k), v)));
  const adj = Object.entries(d.adjustments);
  const adjustments = adj.length
    ? h('table', { class: 'adjustments' },
      h('caption', { class: 'sr-only', text: 'Adjustments made by auto-tuning' }),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'tuned' }), h('th', { scope: 'col', text: 'from' }), h('th', { scope: 'col', text: 'to' }))),
      h('tbody', {}, ...adj.map(([k, v]) => h('tr', {}, h('th', { scope: 'row', text: labelOf(k) }), h('td', { text: num(v.from) }), h('td', { text: num(v.to) })))))
    : null;
  const source = h('dl', {}, ...Object.entries(d.source).flatMap(([k, v]) => [h('dt', { text: measureLabelOf(k) }), h('dd', { text: num(v) })]));
  const details = h('details', { class: 'source' }, h('summary', { text: 'Details' }),
    h('p', { class: 'muted small', text: `Rubric ${d.rubric}: score ${num(d.score)} against ${num(d.threshold)} needed.` }),
    score, h('h3', { text: 'Measured on the art' }), metrics, adjustments, h('h3', { text: 'Measured on the source' }), source);
  return h('div', {}, head, h('p', { class: 'muted small tuning', text: tuning }), details);
}

export function renderCodebook(c: CodebookReport): HTMLElement {
  const glyphs = h('div', { class: 'glyphs', role: 'group', tabindex: 0, 'aria-label': `The ${c.size} characters used` },
    ...[...c.glyphs].map((g) => h('span', { class: g === ' ' || g === '\u2800' ? 'glyph blank' : 'glyph', title: g === ' ' ? 'space' : `${g} U+${g.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`, text: g })));
  return h('div', {},
    h('p', { class: 'codebook-head' },
      h('b', { text: `${c.size}` }), ` of ${c.rampSize} characters · ${num(c.bitsPerCell, 2)} bits each`),
    glyphs,
    meter(`RMSE ≤ ${num(c.maxRmse)}`, c.rmse, Math.max(c.maxRmse * 1.5, c.rmse), c.maxRmse, 'codebook-rmse'),
    h('p', { class: 'muted small', text: codebookNote(c) }),
  );
}

