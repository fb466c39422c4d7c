/**
 * A json-compact recording's file body as Blob parts: each line and its newline as parts of their
 * own, never one joined string. A long recording at a large width outgrows V8's longest string
 * (about 2^29 characters): `lines.join('\n')` then throws "Invalid string length", and the clip
 * was lost. A pure module, so the tests can call it without a page.
 */
export function ndjsonParts(lines: readonly string[]): string[] {
  const parts: string[] = [];
  for (const line of lines) parts.push(line, '\n');
  return parts;
}
