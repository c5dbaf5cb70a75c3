// Issue #20 item 6: alerts answers within the 32 MiB byte limit whose JSON would make the update status controller
// build more than its whole heap: 32 MiB of nested arrays, and 1.15 million tiny alerts (each decoded into its own
// objects). The controller's alerts reader runs in a child process with the update status Deployment's heap flags
// against a loopback Prometheus-like server: it must stay up, leave alerts out, and say why in oc's notice.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ALERTS_BUDGET } from '../../../src/updatestatus/alerts.js';
import { DEFAULT_ALERTS_MAX_BYTES } from '../../../src/updatestatus/alertsource.js';
import { runChild, updateStatusHeapFlags } from './child-process.js';

interface Observed {
  readonly notice: string;
  /** Alerts decoded; undefined when the reader left alerts out. */
  readonly alertsRead: number | undefined;
}

const unavailable = "Unable to fetch alerts, ignoring alerts in 'Update Health':  ";

/** `{"status":"success","data":{"alerts":[ ... ]}}` around `alerts`, as bytes. */
function answer(alerts: string): Buffer {
  return Buffer.from(`{"status":"success","data":{"alerts":${alerts}}}`);
}

describe('hostile alerts answers, in the update status controller under its heap limit', () => {
  let server: Server;
  let base = '';
  const answers = new Map<string, Buffer>();

  beforeAll(async () => {
    const envelope = answer('').length;
    // Exactly the byte limit: 16 million nested arrays.
    const depth = Math.floor((DEFAULT_ALERTS_MAX_BYTES - envelope) / 2);
    answers.set('/nested/api/v1/alerts', answer(`${'['.repeat(depth)}${']'.repeat(depth)}`));
    const tiny = '{"labels":{"alertname":"A"}}';
    answers.set('/tiny/api/v1/alerts', answer(`[${Array(1_150_000).fill(tiny).join(',')}]`));
    answers.set('/one/api/v1/alerts', answer(`[${tiny}]`));
    for (const body of answers.values()) expect(body.length).toBeLessThanOrEqual(DEFAULT_ALERTS_MAX_BYTES);
    server = createServer((req, res) => {
      const body = answers.get(req.url ?? '');
      if (body === undefined) res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  it('stays up through 32 MiB of nested arrays and 1.15 million tiny alerts, naming each budget, and reads on', async () => {
    const outcome = await runChild<{ readings: Observed[] }>(
      'test/unit/hostile/alerts-child.ts',
      updateStatusHeapFlags,
      { PROMETHEUS_URLS: JSON.stringify(['/nested', '/tiny', '/one'].map((prefix) => `${base}${prefix}`)) },
    );
    expect({ exitCode: outcome.exitCode, signal: outcome.signal, stderr: outcome.stderr }).toEqual({
      exitCode: 0,
      signal: null,
      stderr: '',
    });
    expect(outcome.printed?.readings).toEqual([
      {
        notice: `${unavailable}the alerts answer of ${base}/nested/api/v1/alerts nests arrays and objects deeper than ${DEFAULT_ALERTS_BUDGET.maxDepth} levels, the most accepted; it was not parsed\n`,
      },
      {
        notice: `${unavailable}the alerts answer of ${base}/tiny/api/v1/alerts has more than ${DEFAULT_ALERTS_BUDGET.maxValues} JSON values (arrays, objects and their items), the most accepted; it was not parsed\n`,
      },
      // The next ordinary answer is read as before.
      { notice: '', alertsRead: 1 },
    ]);
  }, 60_000);
});
