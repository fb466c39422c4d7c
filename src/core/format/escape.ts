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

/** Font stack of html and svg: the reference font first (glyphs were measured on DejaVu Sans Mono). */
export const FONT_STACK: readonly string[] = Object.freeze(['DejaVu Sans Mono', 'Menlo', 'Consolas', 'Liberation Mono', 'monospace']);
