/**
 * The parameter controls, generated from the one parameter definition (PARAMS): a slider and a
 * number box for numbers, a select for enums, a switch for booleans, a colour well for monoColor;
 * ranges, steps, defaults, groups and descriptions all come from there.
 *
 * A control the user has not touched is "auto": it is not sent, so the Auto Director may tune it
 * (exactly as an API caller who leaves a parameter out), and it shows the value actually used.
 * Touching a control makes it explicit; its reset button makes it auto again.
 */
import {
  DEFAULTS, PARAMS, QUALITY_TARGETS, describeDomain, parseParams, type ParamDef, type ParamGroup, type QualityTarget, type RenderParams,
} from '../core/index.js';
import { glyphsProblem } from '../core/glyphs/charsets.js';
import { h, num } from './dom.js';
import { labelOf, valueLabelOf } from './labels.js';
import type { ExplicitParams } from './protocol.js';

/** How long typing in a number box pauses before its value is taken. */
const TYPING_PAUSE_MS = 400;

export const GROUPS: readonly { readonly id: ParamGroup; readonly title: string }[] = [
  { id: 'output', title: 'Output' },
  { id: 'glyphs', title: 'Characters' },
  { id: 'tone', title: 'Tone' },
  { id: 'detail', title: 'Detail' },
  { id: 'video', title: 'Video' },
  { id: 'director', title: 'Auto-tuning' },
];

/**
 * What a "Tune for" preset hands back to the Auto Director: the numbers of the tone, detail and
 * character groups, which it tunes (the character budget, maxGlyphRmse, among them). The others,
 * output settings (cellAspect), the video's motion response and the tuning strength, stay.
 */
const PRESET_RESETS: ReadonlySet<string> = new Set(PARAMS.filter((d) => d.type === 'number' && (d.group === 'tone' || d.group === 'detail' || d.group === 'glyphs')).map((d) => d.name));

interface Row {
  readonly def: ParamDef;
  readonly el: HTMLElement;
  readonly inputs: readonly (HTMLInputElement | HTMLSelectElement)[];
  readonly reset: HTMLButtonElement;
  readonly badge: HTMLElement;
  /** The badge in words for screen readers (set by you, or tuned from and to what), in the controls' descriptions. */
  readonly said: HTMLElement;
  show(value: unknown): void;
}

function shown(def: ParamDef, v: unknown): string {
  if (def.type === 'number' || def.type === 'integer') return num(Number(v));
  return String(v);
}

export class ParamControls {
  private readonly explicit = new Map<string, unknown>();
  private readonly rows = new Map<string, Row>();
  private effective: RenderParams = { ...DEFAULTS };
  private adjustments: Readonly<Record<string, { from: number; to: number }>> = {};
  private readonly presetButtons = new Map<QualityTarget, HTMLButtonElement>();
  onChange: (params: ExplicitParams) => void = () => {};

  constructor(root: HTMLElement, presets: HTMLElement) {
    for (const group of GROUPS) {
      const defs = PARAMS.filter((d) => d.group === group.id) as readonly ParamDef[];
      if (!defs.length) continue;
      const box = h('fieldset', { class: 'group', 'data-group': group.id }, h('legend', { text: group.title }));
      for (const def of defs) {
        const row = this.row(def);
        this.rows.set(def.name, row);
        box.append(row.el);
      }
      root.append(box);
    }
    for (const target of QUALITY_TARGETS) {
      const b = h('button', { type: 'button', class: 'chip', 'data-preset': target, 'aria-pressed': 'false', text: valueLabelOf('qualityTarget', target) });
      b.title = `Tune for ${valueLabelOf('qualityTarget', target).toLowerCase()}: hands tone, detail and the character budget back to auto-tuning; your style, width and switches stay.`;
      b.addEventListener('click', () => this.preset(target));
      this.presetButtons.set(target, b);
      presets.append(b);
    }
    // Escape closes the tooltip shown (WCAG 1.4.13) until the pointer or the focus leaves its row.
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') for (const row of root.querySelectorAll('.param:hover, .param:focus-within')) row.classList.add('tip-closed');
    });
    this.refresh();
  }

  private row(def: ParamDef): Row {
    const id = `p-${def.name}`;
    const descId = `${id}-desc`;
    const human = labelOf(def.name);
    const label = h('label', { for: id, class: 'name', text: human });
    const badge = h('span', { class: 'badge', 'aria-hidden': 'true' });
    const reset = h('button', { type: 'button', class: 'reset', 'aria-label': `Reset ${human}`, title: `Back to auto (default ${shown(def, def.default)})`, text: '↺' });
    // A tooltip, not a row: it floats over the panel (position: absolute), so showing it on hover
    // or focus moves nothing. The API name is in it for people who script the same render.
    const desc = h('p', { id: descId, class: 'desc', role: 'tooltip' },
      `${def.description} ${cap(describeDomain(def))}; default ${shown(def, def.default)}. `, h('code', { text: def.name }));
    const head = h('div', { class: 'row-head' }, label, badge, reset);
    let inputs: (HTMLInputElement | HTMLSelectElement)[];
    let show: (v: unknown) => void;
    const el = h('div', { class: `param param-${def.type}`, 'data-param': def.name });
    const reopenTip = () => el.classList.remove('tip-closed');
    el.addEventListener('mouseleave', reopenTip);
    el.addEventListener('focusout', reopenTip);

    switch (def.type) {
      case 'integer':
      case 'number': {
        const step = def.type === 'integer' ? 1 : def.step;
        const range = h('input', { type: 'range', id, min: def.min, max: def.max, step, 'aria-describedby': descId });
        const numLabel = h('label', { for: `${id}-n`, class: 'sr-only', text: `${human} value` });
        // A value out of range is said in words under the field (as the glyph ramp's), not only by
        // a red border (WCAG 1.4.1, 3.3.1); the art keeps the last good value meanwhile.
        const problemId = `${id}-problem`;
        const box = h('input', { type: 'number', id: `${id}-n`, min: def.min, max: def.max, step: def.type === 'integer' ? 1 : 'any', inputmode: 'decimal', 'aria-describedby': `${problemId} ${descId}` });
        const problem = h('p', { id: problemId, class: 'field-error', role: 'status' });
        const showProblem = (wrong: boolean) => {
          problem.textContent = wrong ? `${human} must be ${describeDomain(def)}; it stays at ${range.value}.` : '';
          if (wrong) box.setAttribute('aria-invalid', 'true');
          else box.removeAttribute('aria-invalid');
        };
        range.addEventListener('input', () => {
          box.value = range.value;
          showProblem(false);
          this.set(def.name, Number(range.value));
        });
        const fromBox = (final: boolean) => {
          // Read as the API reads a parameter in text (the query string, a form field): its one
          // parser, so that the box takes what a curl of the same value would (1e2 columns it took).
          const raw = box.value.trim();
          const parsed = parseParams({ [def.name]: raw }, 'strings');
          const v = parsed.ok ? ((parsed.params as Record<string, unknown>)[def.name] as number) : NaN;
          if (!parsed.ok || raw === '') {
            // Said once typing pauses too (9999 stood in the box with nothing said until Enter or
            // Tab); an emptied box only when left.
            if (final || box.value.trim() !== '') showProblem(true);
            return;
          }
          showProblem(false);
          range.value = String(v);
          this.set(def.name, v);
        };
        // Typed digits are taken once typing pauses (or on Enter / leaving the field), not per
        // keystroke: typing 200 rendered 20 columns first, and reset a stream's smoothing.
        let typing: ReturnType<typeof setTimeout> | undefined;
        box.addEventListener('input', () => {
          clearTimeout(typing);
          typing = setTimeout(() => fromBox(false), TYPING_PAUSE_MS);
        });
        box.addEventListener('change', () => {
          clearTimeout(typing);
          fromBox(true);
        });
        inputs = [range, box];
        show = (v) => {
          range.value = String(v);
          if (document.activeElement === box) return;
          box.value = num(Number(v), 4);
          showProblem(false);
        };
        el.append(head, h('div', { class: 'row-input' }, range, numLabel, box), problem, desc);
        break;
      }
      case 'boolean': {
        const box = h('input', { type: 'checkbox', id, role: 'switch', 'aria-describedby': descId });
        box.addEventListener('change', () => this.set(def.name, box.checked));
        inputs = [box];
        show = (v) => { box.checked = v === true; };
        el.append(head, desc);
        head.insertBefore(box, label);
        break;
      }
      case 'enum': {
        const sel = h('select', { id, 'aria-describedby': descId }, ...def.values.map((v) => h('option', { value: v, text: valueLabelOf(def.name, v) })));
        sel.addEventListener('change', () => this.set(def.name, sel.value));
        inputs = [sel];
        show = (v) => { sel.value = String(v); };
        el.append(head, h('div', { class: 'row-input' }, sel), desc);
        break;
      }
      case 'color': {
        const well = h('input', { type: 'color', id, 'aria-describedby': descId });
        well.addEventListener('input', () => this.set(def.name, well.value));
        inputs = [well];
        show = (v) => { well.value = String(v); };
        el.append(head, h('div', { class: 'row-input' }, well, h('output', { for: id, class: 'hex' })), desc);
        const out = el.querySelector('output')!;
        const inner = show;
        show = (v) => { inner(v); out.textContent = String(v); };
        break;
      }
      case 'glyphs': {
        // A custom ramp: applied once it is valid (the same check as the API's, naming the glyph).
        // What is wrong shows under the field, not in its tooltip, for as long as the field holds
        // it, and is announced (a live region).
        const problemId = `${id}-problem`;
        const box = h('input', { type: 'text', id, spellcheck: 'false', autocomplete: 'off', 'aria-describedby': `${problemId} ${descId}` });
        const problem = h('p', { id: problemId, class: 'field-error', role: 'status' });
        const showProblem = (why: string | undefined) => {
          problem.textContent = why ? `${def.name} must be ${describeDomain(def)}: ${why}` : '';
          if (why) box.setAttribute('aria-invalid', 'true');
          else box.removeAttribute('aria-invalid');
        };
        box.addEventListener('input', () => {
          const why = glyphsProblem(box.value, def.maxGlyphs);
          showProblem(why);
          if (!why) this.set(def.name, box.value);
        });
        inputs = [box];
        show = (v) => {
          if (document.activeElement === box) return;
          box.value = String(v);
          showProblem(undefined);
        };
        el.append(head, h('div', { class: 'row-input' }, box), problem, desc);
        break;
      }
    }
    reset.addEventListener('click', () => this.reset(def.name));
    // The badge ("auto 1→0.73") is hidden from screen readers as it reads; its words are read
    // with each control's description instead, so what auto-tuning changed is heard too.
    const said = h('span', { id: `${id}-said`, class: 'sr-only' });
    el.append(said);
    for (const input of inputs) input.setAttribute('aria-describedby', `${said.id} ${input.getAttribute('aria-describedby') ?? ''}`.trim());
    return { def, el, inputs, reset, badge, said, show };
  }

  /** The explicit parameters, in the order the user set them. */
  values(): ExplicitParams {
    return Object.fromEntries(this.explicit);
  }

  isExplicit(name: string): boolean {
    return this.explicit.has(name);
  }

  set(name: string, value: unknown, notify = true): void {
    // A changed value moves to the end: the order is the order the user last set them.
    this.explicit.delete(name);
    this.explicit.set(name, value);
    this.refreshRow(name);
    this.refreshPresets();
    if (notify) this.onChange(this.values());
  }

  /** Sets several parameters with one change notification (a style preset). */
  setMany(values: Readonly<Record<string, unknown>>): void {
    for (const [name, value] of Object.entries(values)) this.set(name, value, false);
    this.onChange(this.values());
  }

  /** The value shown for a parameter: set by the user, else what the last render used. */
  current(name: string): unknown {
    return this.explicit.has(name) ? this.explicit.get(name) : (this.effective as Record<string, unknown>)[name];
  }

  reset(name: string): void {
    if (!this.explicit.delete(name)) return;
    this.refreshRow(name);
    this.refreshPresets();
    this.onChange(this.values());
  }

  resetAll(): void {
    this.explicit.clear();
    this.refresh();
    this.onChange(this.values());
  }

  /**
   * Preset for a rubric: qualityTarget set, the settings the Auto Director tunes handed back to it
   * (PRESET_RESETS); every other setting stays as it is.
   */
  preset(target: QualityTarget): void {
    for (const name of PRESET_RESETS) this.explicit.delete(name);
    this.explicit.delete('qualityTarget');
    this.explicit.set('qualityTarget', target);
    this.refresh();
    this.onChange(this.values());
  }

  /** Shows the effective parameters of a result: what auto controls actually rendered with. */
  showEffective(params: RenderParams, adjustments: Readonly<Record<string, { from: number; to: number }>>): void {
    this.effective = params;
    this.adjustments = adjustments;
    this.refresh();
  }

  private refresh(): void {
    for (const name of this.rows.keys()) this.refreshRow(name);
    this.refreshPresets();
  }

  private refreshPresets(): void {
    const target = (this.explicit.get('qualityTarget') ?? this.effective.qualityTarget) as QualityTarget;
    for (const [t, b] of this.presetButtons) b.setAttribute('aria-pressed', String(t === target));
  }

  private refreshRow(name: string): void {
    const row = this.rows.get(name)!;
    const explicit = this.explicit.has(name);
    const value = explicit ? this.explicit.get(name) : (this.effective as Record<string, unknown>)[name];
    row.show(value);
    row.reset.disabled = !explicit;
    row.el.classList.toggle('is-explicit', explicit);
    const adj = this.adjustments[name];
    row.el.classList.toggle('is-tuned', !explicit && adj !== undefined);
    row.badge.textContent = explicit ? 'set' : adj ? `auto ${num(adj.from)}→${num(adj.to)}` : 'auto';
    row.badge.title = explicit
      ? 'Set by you: sent with every render and never tuned.'
      : adj ? `Tuned by the Auto Director from ${num(adj.from)} to ${num(adj.to)}.` : 'Not set: the default, or what the Auto Director chooses.';
    row.said.textContent = row.badge.title;
  }
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
