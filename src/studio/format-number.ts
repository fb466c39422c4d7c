/** Number shown with at most `digits` decimals, trailing zeros dropped. (No DOM: the reports' texts are tested in Node.) */
export function num(v: number, digits = 3): string {
  return String(Math.round(v * 10 ** digits) / 10 ** digits);
}
