/**
 * Help text fitted to the terminal: commander wraps the option lists itself, to the same width;
 * the text around them (parameter summary, manual paragraphs, examples, exit codes) is written
 * one line per paragraph or item and wrapped here as it is printed.
 */

/** The width help is wrapped to: the terminal's on standard output, else 80 (as commander's default). */
export function helpWidth(): number {
  return process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : 80;
}

/** Narrower than this, a description column is not kept: continuation lines indent by two. */
const MIN_COLUMN = 24;

/**
 * `text` with each line longer than `width` broken at spaces. A continuation line is indented to
 * the line's description column (the text after a run of two or more spaces: `--flag  text`,
 * `130  interrupted`), else to the line's own indent. A word longer than the line stays whole.
 */
export function wrapHelp(text: string, width: number): string {
  return text.split('\n').map((line) => wrapLine(line, width)).join('\n');
}

function wrapLine(line: string, width: number): string {
  if ([...line].length <= width) return line;
  const indent = /^ */.exec(line)![0].length;
  const column = /^ *\S.*?\S? {2,}(?=\S)/.exec(line)?.[0].length;
  const hang = column !== undefined && width - column >= MIN_COLUMN ? column : indent + (column !== undefined ? 2 : 0);
  const out: string[] = [];
  let current = line.slice(0, indent);
  let start = true;
  // Words with the spaces before them, so that a description column's padding is kept.
  for (const [chunk] of line.slice(indent).matchAll(/ *\S+/g)) {
    const word = chunk.trimStart();
    if (!start && [...current].length + [...chunk].length > width) {
      out.push(current);
      current = ' '.repeat(hang) + word;
    } else {
      current += start ? word : chunk;
    }
    start = false;
  }
  out.push(current);
  return out.join('\n');
}
