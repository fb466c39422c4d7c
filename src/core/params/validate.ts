import { checkFields, describeType } from '../args.js';
import { V2aError, fieldDetail, type FieldError } from '../errors.js';
import { glyphsProblem } from '../glyphs/charsets.js';
import { DEFAULTS, PARAM_BY_NAME, describeDomain, type ParamDef, type RenderParams } from './definitions.js';

/** A parameter at fault, as the caller spelled it, and what is wrong with it. */
export type ParamError = FieldError;

export type ParseResult =
  | { readonly ok: true; readonly params: Partial<RenderParams> }
  | { readonly ok: false; readonly errors: readonly ParamError[] };

/**
 * `strings`: values come from a query string, form field or CLI flag and are parsed from text
 * (booleans also as 1/0). `json`: values must already have their JSON type.
 */
export type Carrier = 'strings' | 'json';

const INTEGER = /^[+-]?\d{1,12}$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,3})?$/;
const HEX = /^#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/**
 * An integer written as text carries it (query strings, form fields, CLI flags): an optional sign,
 * leading zeros and surrounding blanks allowed (`+40`, `040`); undefined otherwise.
 */
export function integerFromText(text: string): number | undefined {
  const t = text.trim();
  return INTEGER.test(t) ? Number(t) : undefined;
}

/** Longest unknown parameter name an error repeats in full (the longest known one is far shorter). */
const MAX_NAME = 64;

function show(value: unknown): string {
  // A number as itself: JSON.parse reads 1e999 as Infinity, which JSON.stringify would call null.
  // A library caller's value may be one JSON cannot write (a BigInt, a cycle, a throwing toJSON):
  // named by its type then, so the error is still the parameter's.
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : typeof value === 'number' ? String(value) : String(JSON.stringify(value) ?? value);
  } catch {
    text = typeof value === 'bigint' ? `${value}n` : `${typeof value === 'object' ? 'an object' : `a ${typeof value}`} JSON cannot write`;
  }
  return text.length > 40 ? text.slice(0, 37) + '...' : text;
}

/** Normalises `#ABC`, `abc`, `#aabbcc` to `#aabbcc`; anything else is a TypeError. */
export function normalizeHex(text: string): string {
  if (typeof text !== 'string' || !HEX.test(text)) throw new TypeError(`normalizeHex: not a hex colour (#rgb or #rrggbb): ${typeof text === 'string' ? JSON.stringify(text.slice(0, 40)) : describeType(text)}`);
  let hex = text.startsWith('#') ? text.slice(1) : text;
  if (hex.length === 3) hex = hex.replace(/./g, (c) => c + c);
  return '#' + hex.toLowerCase();
}

function parseOne(def: ParamDef, raw: unknown, carrier: Carrier): { value: unknown } | { error: string } {
  const wrong = () => ({ error: `${def.name} must be ${describeDomain(def)} (got ${show(raw)})` });
  switch (def.type) {
    case 'integer':
    case 'number': {
      let n: number | undefined;
      if (typeof raw === 'number') n = raw;
      else if (carrier === 'strings' && typeof raw === 'string') n = def.type === 'integer' ? integerFromText(raw) : DECIMAL.test(raw.trim()) ? Number(raw.trim()) : undefined;
      if (n === undefined) return wrong();
      if (!Number.isFinite(n) || (def.type === 'integer' && !Number.isInteger(n))) return wrong();
      if (n < def.min || n > def.max) return wrong();
      return { value: n };
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return { value: raw };
      if (carrier === 'strings' && typeof raw === 'string') {
        const t = raw.trim().toLowerCase();
        if (t === 'true' || t === '1') return { value: true };
        if (t === 'false' || t === '0') return { value: false };
      }
      return wrong();
    }
    case 'enum':
      if (typeof raw === 'string' && (def.values as readonly string[]).includes(raw)) return { value: raw };
      return wrong();
    case 'color':
      if (typeof raw === 'string' && HEX.test(raw.trim())) return { value: normalizeHex(raw.trim()) };
      return wrong();
    case 'glyphs': {
      // Taken as given (no trimming: the space is a glyph); the message names the offending glyph.
      if (typeof raw !== 'string') return wrong();
      const problem = glyphsProblem(raw, def.maxGlyphs);
      return problem ? { error: `${def.name} must be ${describeDomain(def)}: ${problem}` } : { value: raw };
    }
  }
}

/**
 * Validates caller-supplied parameters. Unknown names, wrong types and out-of-range values are all
 * refused with the parameter named; nothing is clamped. Returns only what the caller set, so the
 * Auto Director can tell explicit values from defaults.
 */
export function parseParams(input: Readonly<Record<string, unknown>>, carrier: Carrier): ParseResult {
  checkFields(input, 'params');
  // A carrier left out or misspelt would parse as one of the two without saying so.
  if (carrier !== 'json' && carrier !== 'strings') throw new TypeError(`parseParams: carrier must be 'json' or 'strings' (got ${typeof carrier === 'string' ? JSON.stringify(carrier) : describeType(carrier)})`);
  const params: Record<string, unknown> = {};
  const errors: ParamError[] = [];
  for (const [key, raw] of Object.entries(input)) {
    if (raw === undefined) continue;
    const def = PARAM_BY_NAME.get(key);
    if (!def) {
      // A name is named as sent, up to a point: a 3 MB JSON key was echoed whole in the reply.
      errors.push({ parameter: key.length > MAX_NAME ? `${key.slice(0, MAX_NAME - 3)}...` : key, message: `unknown parameter ${show(key)}` });
      continue;
    }
    // Text carriers give a repeated name as an array; in JSON an array is a value of the wrong type.
    if (Array.isArray(raw) && carrier === 'strings') {
      errors.push({ parameter: key, message: `${key} was given more than once` });
      continue;
    }
    const r = parseOne(def, raw, carrier);
    if ('error' in r) errors.push({ parameter: key, message: r.error });
    else params[key] = r.value;
  }
  return errors.length ? { ok: false, errors } : { ok: true, params: params as Partial<RenderParams> };
}

/** Defaults overlaid with the caller's values. */
export function withDefaults(explicit: Partial<RenderParams>): RenderParams {
  return { ...DEFAULTS, ...explicit };
}

/** `invalid-parameters`, naming every parameter at fault; for callers that want exceptions. */
export class ParamValidationError extends V2aError {
  override name = 'ParamValidationError';
  declare readonly errors: readonly ParamError[];
  constructor(errors: readonly ParamError[]) {
    super('invalid-parameters', fieldDetail(errors), { errors });
  }
}

/** parseParams, throwing ParamValidationError (naming every parameter at fault) instead of returning it. */
export function parseParamsOrThrow(input: Readonly<Record<string, unknown>>, carrier: Carrier): Partial<RenderParams> {
  const r = parseParams(input, carrier);
  if (!r.ok) throw new ParamValidationError(r.errors);
  return r.params;
}
