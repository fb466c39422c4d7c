/**
 * What an operator meets: the server entry's arguments (main.ts), the keep-alive timeout
 * (V2A_KEEP_ALIVE_TIMEOUT_MS), a setting refused on its default, the shutdown delay
 * (V2A_SHUTDOWN_DELAY_MS), and the process metrics and labels of GET /api/v1/metrics.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/server/config.js';
import { startServer, type RunningServer } from '../src/server/start.js';
import { V2A_BIN, ensureCliBuilt } from './helpers/cli-run.js';

const ROOT = join(import.meta.dirname, '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const start = (env: Record<string, string>, options: Parameters<typeof startServer>[1] = {}): Promise<RunningServer> =>
  startServer(loadConfig({ LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1', V2A_WORKERS: '1', V2A_RATE_LIMIT: '0', V2A_WARM_UP: 'false', ...env }), { handleSignals: false, logger: false, ...options });

const get = async (url: string, init: RequestInit = {}) => {
  const r = await fetch(url, init);
  return { status: r.status, headers: r.headers, text: await r.text() };
};

describe('the server entry (npm start) and its arguments', () => {
  // The built entries, as npm start and the bin run them (tsx cost each spawn about 0.5 s of CPU).
  before(ensureCliBuilt);
  // PORT 1: were the server to start, it could not listen there and would say so (exit 2 too, but not this message).
  const run = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'dist/server/main.cjs'), ...args], {
    cwd: ROOT, encoding: 'utf8', timeout: 30_000, env: { ...process.env, PORT: '1', HOST: '127.0.0.1', V2A_WORKERS: '1', LOG_LEVEL: 'info' },
  });

  test('--settings prints what v2a serve --settings prints, and exits 0', () => {
    const r = run('--settings');
    assert.equal(r.status, 0, r.stderr);
    const cli = spawnSync(process.execPath, [V2A_BIN, 'serve', '--settings'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal(r.stdout, cli.stdout);
    assert.match(r.stdout, /V2A_KEEP_ALIVE_TIMEOUT_MS\n {6}default: 72000/);
  });

  test('--help prints a usage and exits 0', () => {
    const r = run('--help');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Usage: node dist\/server\/main\.cjs \[--settings \| --help\]/);
    assert.equal(r.stderr, '');
  });

  test('any other argument is refused in one line, exit 2, before anything listens', () => {
    for (const args of [['--port', '3000'], ['serve'], ['--settings', '--help']]) {
      const r = run(...args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /^v2a: (unknown argument "(--port|serve)"|one argument at most): the server takes only --settings or --help[^\n]*\n$/);
      assert.equal(r.stdout, '', 'no log line: nothing started');
    }
  });
});

describe('V2A_KEEP_ALIVE_TIMEOUT_MS', () => {
  test('defaults to 72 s, as before', () => {
    assert.equal(loadConfig({}).keepAliveTimeoutMs, 72_000);
    assert.throws(() => loadConfig({ V2A_KEEP_ALIVE_TIMEOUT_MS: '0' }), /V2A_KEEP_ALIVE_TIMEOUT_MS/);
  });

  test('the server announces it (Keep-Alive: timeout=) and closes an idle connection after it, not before', { timeout: 30_000 }, async () => {
    // Shorter than the headers timeout: Node counts that from each request's first byte, so an
    // idle keep-alive connection is not cut by it.
    const running = await start({ V2A_KEEP_ALIVE_TIMEOUT_MS: '1000', V2A_HEADERS_TIMEOUT_MS: '300' });
    try {
      const port = Number(new URL(running.url).port);
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      let received = '';
      socket.setEncoding('latin1').on('data', (d: string) => (received += d));
      const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now())));
      const ask = () => socket.write('GET /api/v1/health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      ask();
      while (!received.includes('"alive"')) await sleep(10);
      const answered = performance.now();
      assert.match(received, /^keep-alive: timeout=1\r$/im);
      // 0.6 s idle, past the headers timeout: the connection still serves a second request.
      await sleep(600);
      received = '';
      ask();
      while (!received.includes('"alive"')) await sleep(10);
      const again = performance.now();
      const at = await closed;
      assert.ok(again - answered >= 550, 'the connection stayed open while idle under the timeout');
      assert.ok(at - again >= 850 && at - again < 5000, `closed ${(at - again).toFixed(0)} ms after the last reply`);
    } finally {
      await running.shutdown();
    }
  });
});

test('a setting refused against its default names the default, not undefined', () => {
  const err = (() => {
    try {
      loadConfig({ V2A_HEADERS_TIMEOUT_MS: '200000' });
    } catch (e) {
      return e as ConfigError;
    }
    return undefined;
  })();
  assert.ok(err instanceof ConfigError);
  assert.deepEqual(err.problems, ['V2A_REQUEST_TIMEOUT_MS must be at least V2A_HEADERS_TIMEOUT_MS (200000) (unset: its default is 120000)']);
});

describe('V2A_SHUTDOWN_DELAY_MS', () => {
  test('defaults to 0: the drain starts at once', async () => {
    assert.equal(loadConfig({}).shutdownDelayMs, 0);
    const running = await start({});
    const stopping = running.shutdown();
    assert.equal(running.app.v2a.closing, true);
    assert.equal(await stopping, true);
  });

  test('during the delay readiness answers 503 and requests are still served; the drain follows, its timeout counted from then', { timeout: 30_000 }, async () => {
    // The shutdown timeout is shorter than the delay: counted from the signal, it would have run out.
    const running = await start({ V2A_SHUTDOWN_DELAY_MS: '1500', V2A_SHUTDOWN_TIMEOUT_MS: '1000' });
    const t0 = performance.now();
    assert.equal((await get(`${running.url}/api/v1/health/ready`)).status, 200);
    const stopping = running.shutdown('test');
    const ready = await get(`${running.url}/api/v1/health/ready`);
    assert.equal(ready.status, 503);
    assert.equal(JSON.parse(ready.text).status, 'draining');
    assert.equal(ready.headers.get('retry-after'), '5');
    const health = await get(`${running.url}/api/v1/health`);
    assert.equal(JSON.parse(health.text).status, 'shutting_down');
    assert.equal(health.headers.get('retry-after'), '5');
    const work = await get(`${running.url}/api/openapi.json`);
    assert.equal(work.status, 200, 'other requests are served during the delay');
    assert.notEqual(work.headers.get('connection'), 'close');
    assert.equal(running.app.v2a.closing, false);
    assert.equal(await stopping, true, 'graceful');
    assert.ok(performance.now() - t0 >= 1400, 'the listener stayed open for the delay');
  });

  test('a second signal during the delay starts the drain at once (a third would exit)', { timeout: 30_000 }, async () => {
    const lines: any[] = [];
    const stream = { write: (l: string) => { lines.push(JSON.parse(l)); } };
    const running = await start({ V2A_SHUTDOWN_DELAY_MS: '60000' }, { handleSignals: true, logger: { level: 'info', stream } });
    process.emit('SIGTERM', 'SIGTERM');
    await sleep(50);
    assert.equal(running.app.v2a.closing, false, 'waiting out the delay');
    assert.equal((await get(`${running.url}/api/v1/health/ready`)).status, 503);
    const t0 = performance.now();
    process.emit('SIGINT', 'SIGINT');
    assert.equal(await running.closed, true);
    assert.ok(performance.now() - t0 < 5000, 'not held for the 60 s delay');
    assert.ok(lines.some((l) => l.msg === 'second signal: ending V2A_SHUTDOWN_DELAY_MS, draining now'), JSON.stringify(lines.map((l) => l.msg)));
    assert.equal(process.listenerCount('SIGTERM'), 0, 'no handler left behind');
  });
});

describe('metrics', () => {
  const scrape = async (running: RunningServer) => (await get(`${running.url}/api/v1/metrics`)).text;

  test('process metrics (prom-client default names), in every app of one process', { timeout: 30_000 }, async () => {
    const a = await start({ V2A_METRICS: 'on' });
    const b = await start({ V2A_METRICS: 'on' });
    try {
      for (const running of [a, b]) {
        // The event loop's delays are sampled every 10 ms, and each scrape empties the process's
        // histogram: a scrape right after another finds none, and leaves the statistics out.
        await sleep(50);
        const text = await scrape(running);
        for (const name of ['process_start_time_seconds', 'process_open_fds', 'process_max_fds', 'nodejs_heap_size_total_bytes', 'nodejs_external_memory_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_eventloop_lag_max_seconds']) {
          assert.match(text, new RegExp(`^# TYPE ${name} gauge\\n${name} [0-9.e+-]+$`, 'm'), name);
        }
        const startSeconds = Number(/^process_start_time_seconds (\S+)$/m.exec(text)![1]);
        assert.ok(Math.abs(startSeconds - (Date.now() / 1000 - process.uptime())) < 2);
      }
    } finally {
      await a.shutdown();
      await b.shutdown();
    }
  });

  test('a 405 is labelled with its route, unknown paths stay unmatched; durations are bucketed up to 120 s', { timeout: 30_000 }, async () => {
    const running = await start({ V2A_METRICS: 'on' });
    try {
      assert.equal((await get(`${running.url}/api/v1/render`, { method: 'PUT' })).status, 405);
      assert.equal((await get(`${running.url}/no/such/path`)).status, 404);
      const text = await scrape(running);
      assert.match(text, /^v2a_http_requests_total\{method="PUT",route="\/api\/v1\/render",status="405"\} 1$/m);
      assert.match(text, /^v2a_http_requests_total\{method="GET",route="unmatched",status="404"\} 1$/m);
      // prom-client writes `le` first.
      assert.match(text, /^v2a_http_request_duration_seconds_bucket\{le="120",method="PUT",route="\/api\/v1\/render"\} 1$/m);
    } finally {
      await running.shutdown();
    }
  });
});
