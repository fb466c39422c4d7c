/**
 * The parameters the user set, kept across reloads in localStorage: a reload (or the next visit)
 * showed the art at defaults again, every slider lost. Only what the user set is kept, as the
 * controls hold it (controls left to auto stay auto); each entry is checked again when read, so
 * one that a later version refuses (a renamed parameter, a narrower range) is dropped alone.
 * Storage may be refused (a private window, a policy): the page then works as before.
 */
import { parseParams } from '../core/params/validate.js';
import type { ExplicitParams } from './protocol.js';

export const SETTINGS_KEY = 'v2a-studio-settings';

/** The settings kept, in the order they were set; {} when none, or storage is refused. */
export function savedSettings(): ExplicitParams {
  let raw: string | null;
  try {
    raw = localStorage.getItem(SETTINGS_KEY);
  } catch {
    return {};
  }
  let stored: unknown;
  try {
    stored = raw === null ? null : JSON.parse(raw);
  } catch {
    return {};
  }
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return {};
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(stored)) {
    const r = parseParams({ [name]: value }, 'json');
    if (r.ok && name in r.params) out[name] = (r.params as Record<string, unknown>)[name];
  }
  return out;
}

/** Keeps `params` (none: forgets them). */
export function saveSettings(params: ExplicitParams): void {
  try {
    if (Object.keys(params).length) localStorage.setItem(SETTINGS_KEY, JSON.stringify(params));
    else localStorage.removeItem(SETTINGS_KEY);
  } catch { /* refused: kept for this page only */ }
}
