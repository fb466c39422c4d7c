/**
 * The terminal while `v2a play` (and `render --animate`) draws frames in place: the cursor hidden
 * and the screen taken from the first frame on, the keyboard in raw mode (standard input when it
 * is the terminal; the terminal itself, /dev/tty, when standard input is the clip or a pipe, as
 * pagers and players read their keys), and every way out restoring the terminal as it was:
 *
 * - `q` stops the playback (exit 0). Raw mode turns the terminal's own signal keys off, so they
 *   are handled here as the terminal would: Ctrl-C is SIGINT, Ctrl-\ SIGQUIT, Ctrl-Z suspends.
 * - SIGINT, SIGTERM, SIGHUP (the terminal closed), SIGQUIT: restore, exit 128 + the signal (the
 *   terminal gone: killed by SIGHUP, which the shell reports as 129 too).
 * - SIGTSTP (Ctrl-Z): restore, stop; SIGCONT (fg): cursor hidden, raw mode and the frame back.
 *   The playing clock stands still meanwhile, so frames are not late (and dropped) after it.
 * - In the background (`v2a play x.gif &`, or `bg` after Ctrl-Z) the keyboard is the shell's:
 *   touching its modes or reading it would stop the job (SIGTTOU, SIGTTIN), so playback goes on
 *   without keys, and takes them once `fg` brings it to the foreground (checked at SIGCONT and at
 *   each frame: bash's `fg` of a running job sends no signal).
 * - A resize (SIGWINCH) is noted for the player, which refits.
 *
 * Frames are drawn in place below the prompt, as a still image is printed: the first reserves the
 * art's rows (newlines, scrolling if need be), each next one moves the cursor back up to the top
 * of the last (relative moves stay right when the terminal scrolls), and the last frame stays in
 * the scrollback where it was drawn, the prompt below it. Only art taller than the terminal,
 * whose top the cursor cannot reach, is drawn from the top left corner of a cleared screen, as is
 * the first frame after a resize that the frame on screen no longer fits (the terminal has
 * rewrapped or cut its lines).
 */
import { openSync, readFileSync, writeSync } from 'node:fs';
import { constants } from 'node:os';
import { ReadStream } from 'node:tty';
import { ESC, writeStdout } from './terminal.js';
import { hangUp } from './exit.js';

const EXIT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;
type ExitSignal = (typeof EXIT_SIGNALS)[number];

/** Raw-mode bytes of the keys the terminal would have turned into signals. */
const KEY_SIGNALS: Readonly<Record<number, ExitSignal>> = { 0x03: 'SIGINT', 0x1c: 'SIGQUIT' };
const CTRL_Z = 0x1a;

export class PlaybackTerminal {
  /** `q` was typed: the player stops. */
  quit = false;
  private drawn = false;
  private hidden = false;
  private raw = false;
  private stopped = false;
  private resized = false;
  /** A resize since the last frame was drawn. */
  private moved = false;
  /** The frame last drawn, the cursor where it ended; none: the next frame reserves its rows where the cursor is. */
  private onScreen: (Size & { fromTop: boolean }) | undefined;
  /** The body on screen, drawn again after a suspension. */
  private last = '';
  private pausedAt = 0;
  private paused = 0;
  private timer: NodeJS.Timeout | undefined;
  private resolveWait: (() => void) | undefined;

  private resolveQuit: (() => void) | undefined;
  /**
   * Resolves when q is typed. The player reads `quit` between frames; this also ends the wait for
   * the input itself (a clip still coming down a pipe: q was seen only once it had all arrived).
   */
  readonly quitting = new Promise<void>((resolve) => {
    this.resolveQuit = resolve;
  });

  /** Where the keys are read: none when there is no terminal to read them from. */
  private readonly keyboard: ReadStream | undefined;

  /** `stdinIsClip`: the clip comes on standard input, which is then no keyboard. */
  constructor(stdinIsClip: boolean) {
    this.keyboard = keyboard(stdinIsClip);
    for (const s of EXIT_SIGNALS) process.on(s, this.onExitSignal);
    process.on('SIGTSTP', this.onStop);
    process.on('SIGCONT', this.onContinue);
    process.stdout.on('resize', this.onResize);
    process.stdout.prependListener('error', this.onOutputError);
    this.takeKeys();
  }

  /** Playing time in ms: performance.now() without the time spent suspended. */
  readonly now = (): number => performance.now() - this.paused;

  /** Whether the terminal was resized since the last call. */
  takeResize(): boolean {
    const r = this.resized;
    this.resized = false;
    return r;
  }

  /** Waits `ms` of playing time, less if `q` is typed. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.resolveWait = resolve;
      this.timer = setTimeout(this.wake, ms);
    });
  }

  /** Draws a frame in place of the last one (see above); the first one below the cursor. */
  draw(body: string): Promise<void> {
    this.last = body;
    // Brought to the foreground while running (fg after &): bash sends no SIGCONT then.
    if (!this.raw && !this.stopped) this.takeKeys();
    const lead = (this.hidden ? '' : ESC.hideCursor) + this.place(body);
    this.drawn = this.hidden = true;
    return writeStdout(lead + body);
  }

  /** The escapes that put the cursor where `body` is drawn, noting it as the frame on screen. */
  private place(body: string): string {
    const size = measure(body);
    const screen = { rows: process.stdout.rows > 0 ? process.stdout.rows : 24, columns: process.stdout.columns > 0 ? process.stdout.columns : 80 };
    const last = this.onScreen;
    const afterResize = this.moved;
    this.moved = false;
    // The rows from the frame's top to where the cursor ends: all on screen, or the top is out of reach.
    const fromTop = size.feeds >= screen.rows;
    this.onScreen = { ...size, fromTop };
    if (fromTop) return (last?.fromTop && !afterResize ? '' : ESC.clearScreen) + ESC.home;
    if (last === undefined) return '\n'.repeat(size.feeds) + up(size.feeds);
    // The last frame is out of reach: scrolled off (taller than the screen) or rewrapped by a resize.
    if (last.fromTop || (afterResize && (last.columns > screen.columns || last.feeds >= screen.rows))) return ESC.clearScreen + ESC.home;
    // Another size (refitted): what the new frame does not cover goes.
    const reshaped = size.feeds !== last.feeds || size.columns !== last.columns;
    return up(last.feeds) + (reshaped ? ESC.clearBelow : '');
  }

  /** Gives the terminal back as it was; the frame stays on screen. */
  close(): void {
    // A write that failed as the terminal hung up may end the playback before SIGHUP's event.
    if (!this.restore()) hangUp();
    for (const s of EXIT_SIGNALS) process.removeListener(s, this.onExitSignal);
    process.removeListener('SIGTSTP', this.onStop);
    process.removeListener('SIGCONT', this.onContinue);
    process.stdout.removeListener('resize', this.onResize);
    process.stdout.removeListener('error', this.onOutputError);
    if (this.keyboard) {
      this.keyboard.removeListener('data', this.onKey);
      this.keyboard.pause();
      // Its own /dev/tty: closed, or it would keep the process alive.
      if (this.keyboard !== process.stdin) this.keyboard.destroy();
    }
    this.wake();
  }

  private readonly wake = (): void => {
    clearTimeout(this.timer);
    const resolve = this.resolveWait;
    this.resolveWait = undefined;
    resolve?.();
  };

  /** Raw mode and the keyboard read, when there are keys to read and the job is in the foreground. */
  private takeKeys(): void {
    const input = this.keyboard;
    if (!input || this.raw || !inForeground()) return;
    input.setRawMode(true);
    if (!input.listeners('data').includes(this.onKey)) input.on('data', this.onKey);
    input.resume();
    this.raw = true;
  }

  /** Restores what was changed; false when the terminal is gone (hung up). Each step on its own. */
  private restore(): boolean {
    let ok = true;
    if (this.raw) {
      this.raw = false;
      try {
        this.keyboard!.setRawMode(false);
        // Not read while stopped or in the background (a read there would stop the job again).
        this.keyboard!.pause();
      } catch {
        ok = false;
      }
    }
    if (this.hidden) {
      this.hidden = false;
      // The prompt (or the shell's "Stopped") goes below the frame, not after its last row.
      const below = this.onScreen?.open ? '\n' : '';
      this.onScreen = undefined;
      try {
        writeSync(1, below + ESC.reset + ESC.showCursor);
      } catch {
        ok = false;
      }
    }
    return ok;
  }

  /** Before the CLI's own handler, which exits at once (terminal.ts): restore first, or if the terminal is gone, hang up. */
  private readonly onOutputError = (): void => {
    if (!this.restore()) hangUp();
  };

  private readonly onExitSignal = (signal: ExitSignal): void => {
    // The terminal hung up: die of SIGHUP (exit.ts), which the shell reports as 129 too.
    if (!this.restore() || signal === 'SIGHUP') hangUp();
    process.exit(128 + constants.signals[signal]);
  };

  /**
   * Restores the terminal, then stops as SIGTSTP's default would: the handler is removed first so
   * that the signal raised again stops the process. Ctrl-Z stops the whole job (the process group,
   * ffmpeg included), as the terminal would have; a SIGTSTP sent to v2a alone stops v2a alone.
   */
  private suspend(group: boolean): void {
    if (this.stopped) return;
    this.stopped = true;
    this.restore();
    this.pausedAt = performance.now();
    process.removeListener('SIGTSTP', this.onStop);
    process.kill(group ? 0 : process.pid, 'SIGTSTP');
    // A signal sent to oneself is taken on the way out of kill(): stopped, this runs once
    // continued (SIGCONT's event then finds nothing to do). In an orphaned process group the
    // kernel discards the signal, as it would the terminal's Ctrl-Z: playback goes on.
    this.onContinue();
  }

  private readonly onStop = (): void => this.suspend(false);

  /** Continued after a stop (fg or bg), or brought to the foreground while running (fg after &). */
  private readonly onContinue = (): void => {
    const wasStopped = this.stopped;
    if (wasStopped) {
      this.stopped = false;
      this.paused += performance.now() - this.pausedAt;
      process.on('SIGTSTP', this.onStop);
    }
    try {
      this.takeKeys();
      // The frame again at once, below what the shell wrote meanwhile, not at the next frame.
      if (wasStopped && this.drawn && inForeground()) {
        this.hidden = true;
        writeSync(1, ESC.hideCursor + this.place(this.last) + this.last);
      }
    } catch {
      // the terminal is gone: SIGHUP follows
    }
  };

  private readonly onResize = (): void => {
    this.resized = this.moved = true;
  };

  private readonly onKey = (data: Buffer): void => {
    for (const byte of data) {
      const signal = KEY_SIGNALS[byte];
      if (signal) return this.onExitSignal(signal);
      if (byte === CTRL_Z) return this.suspend(true);
      if (byte === 0x71 || byte === 0x51) {
        // q or Q
        this.quit = true;
        this.resolveQuit?.();
        this.wake();
      }
    }
  };
}

/**
 * The keyboard: standard input when it is a terminal and not the clip; else the process's
 * terminal (/dev/tty) while frames go to one; none without a terminal to open.
 */
function keyboard(stdinIsClip: boolean): ReadStream | undefined {
  if (!stdinIsClip && process.stdin.isTTY === true) return process.stdin as ReadStream;
  if (process.stdout.isTTY !== true) return undefined;
  try {
    const tty = new ReadStream(openSync('/dev/tty', 'r'));
    // A read error (the terminal hung up) is SIGHUP's to handle, not an uncaught one.
    tty.on('error', () => undefined);
    return tty;
  } catch {
    return undefined;
  }
}

/** To the start of the row `n` above (CSI 0 A would move one up). */
const up = (n: number): string => `\r${n > 0 ? `\x1b[${n}A` : ''}`;

/**
 * A frame's shape: `feeds`, the rows the cursor moves down drawing it (a newline ends each row);
 * `open`, it ends on its last row, not below it; `columns`, its widest line without escapes, a code
 * point a column (ASCII, blocks, Braille).
 */
interface Size { feeds: number; open: boolean; columns: number }

function measure(body: string): Size {
  const lines = body.split('\n');
  return { feeds: lines.length - 1, open: !body.endsWith('\n'), columns: Math.max(...lines.map((l) => [...l.replace(/\x1b\[[0-9;]*m/g, '')].length)) };
}

/**
 * Whether this process's group is the terminal's foreground group (Linux: /proc/self/stat's pgrp
 * and tpgid). Elsewhere, or when it cannot be read, taken as true: the behaviour before this check.
 */
function inForeground(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'latin1');
    // After the command name in parentheses: state ppid pgrp session tty_nr tpgid ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[2] === fields[5];
  } catch {
    return true;
  }
}
