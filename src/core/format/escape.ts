/** Markup escaping shared by html and svg. */

const ENTITY: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes `& < > " '` for HTML and XML text and attribute values. */
export function escapeMarkup(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ENTITY[c]!);
}

/**
 * The art's accessible name (html's `aria-label`, svg's `<title>` and `aria-label`, the studio's
 * canvas): what a screen reader says instead of reading out every glyph, in words, not ids.
 */
export function artLabel(columns: number, rows: number, color: boolean): string {
  return `Character art, ${columns} by ${rows} characters${color ? ', in colour' : ''}`;
}

/** Font stack of html and svg: the reference font first (glyphs were measured on DejaVu Sans Mono). */
export const FONT_STACK: readonly string[] = Object.freeze(['DejaVu Sans Mono', 'Menlo', 'Consolas', 'Liberation Mono', 'monospace']);
