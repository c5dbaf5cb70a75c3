// Hostile request bodies against the real WebhookServer on loopback (issue #10 items 1 and 2): an oversized chunked
// body (no Content-Length), a deeply nested document, a document of millions of tiny values, and many large bodies
// at once. Each is refused with a status naming the budget, before the expensive step (buffering, JSON.parse), and
// the process keeps serving normal reviews with bounded heap growth and event-loop stalls.
import type tls from 'node:tls';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WEBHOOK_BUDGET_DEFAULTS } from '../../../src/runtime/webhook/server.js';
import {
  MiB,
  admission,
  collect,
  connectTls,
  heapAfterGc,
  post,
  review,
  startWebhook,
  watchEventLoop,
  type RunningWebhook,
} from './webhook-support.js';

const HEAD = 'POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n';

/** Writes, respecting backpressure, until done or the server closes the connection; returns bytes written. */
async function writeUntilClosed(socket: tls.TLSSocket, pieces: Iterable<Buffer | string>): Promise<number> {
  let written = 0;
  for (const piece of pieces) {
    if (socket.destroyed || !socket.writable) break;
    written += Buffer.byteLength(piece);
    if (!socket.write(piece))
      await new Promise<void>((resolve) => {
        const done = (): void => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        socket.on('drain', done);
        socket.on('close', done);
      });
  }
  return written;
}

/** `total` bytes of `{"a":"xxxx...` in chunked framing, 64 KiB per chunk, never terminated. */
function* chunkedFlood(total: number): Generator<string> {
  const chunk = 'x'.repeat(64 * 1024);
  yield `${HEAD}Transfer-Encoding: chunked\r\n\r\n`;
  yield `6\r\n{"a":"\r\n`;
  for (let sent = 0; sent < total; sent += chunk.length) yield `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
}

let unhandled: unknown[] = [];
const onUnhandled = (err: unknown): void => void unhandled.push(err);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

describe('webhook request bodies from a hostile caller', () => {
  let hook: RunningWebhook;
  beforeAll(async () => {
    // The deployed budgets, as the issue tried them.
    hook = await startWebhook();
  });
  afterAll(async () => {
    await hook.stop();
  });

  it('answers 413 to an oversized chunked body (no Content-Length), 3 times out of 3, and keeps serving', async () => {
    const heapBefore = heapAfterGc();
    const loop = watchEventLoop();
    for (let attempt = 0; attempt < 3; attempt++) {
      const socket = await connectTls(hook);
      const received = collect(socket);
      const written = await writeUntilClosed(socket, chunkedFlood(8 * MiB));
      socket.end();
      const { text } = await received;
      // The server stopped reading: what it answered is a 413 naming the limit; it did not take the whole body.
      expect(text).toMatch(/^HTTP\/1\.1 413 /);
      expect(text).toContain(`exceeds the ${WEBHOOK_BUDGET_DEFAULTS.maxRequestBytes} byte limit`);
      expect(written).toBeGreaterThan(WEBHOOK_BUDGET_DEFAULTS.maxRequestBytes);
    }
    expect(loop.stop()).toBeLessThan(1_000);
    expect(hook.server.stats().refusals.body_too_large).toBe(3);
    expect(unhandled).toEqual([]);
    // Still serving, and nothing of the refused bodies is retained.
    expect(admission(await post(hook, review('after-flood')))).toMatchObject({
      uid: 'after-flood',
      allowed: true,
    });
    expect(hook.server.stats().inFlightBytes).toBe(0);
    expect(heapAfterGc() - heapBefore).toBeLessThan(32 * MiB);
  });

  it('still answers 413 before reading a body whose declared length is over the limit', async () => {
    const socket = await connectTls(hook);
    const received = collect(socket);
    socket.write(`${HEAD}Content-Length: ${WEBHOOK_BUDGET_DEFAULTS.maxRequestBytes + 1}\r\n\r\n{"a":`);
    const { text } = await received;
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toContain(`request body of ${WEBHOOK_BUDGET_DEFAULTS.maxRequestBytes + 1} bytes exceeds`);
  });

  it.each([
    ['with Content-Length', false],
    ['chunked', true],
  ])(
    'refuses a ~6 MB deeply nested document (%s) with 400 naming the depth limit, before JSON.parse',
    async (_framing, chunked) => {
      const depth = 3 * 1024 * 1024;
      const body = `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      const heapBefore = heapAfterGc();
      const loop = watchEventLoop();
      const socket = await connectTls(hook);
      const received = collect(socket);
      if (chunked) {
        const pieces = function* (): Generator<string> {
          yield `${HEAD}Transfer-Encoding: chunked\r\n\r\n`;
          for (let i = 0; i < body.length; i += 64 * 1024) {
            const piece = body.slice(i, i + 64 * 1024);
            yield `${piece.length.toString(16)}\r\n${piece}\r\n`;
          }
          yield '0\r\n\r\n';
        };
        await writeUntilClosed(socket, pieces());
      } else {
        await writeUntilClosed(socket, [`${HEAD}Content-Length: ${body.length}\r\n\r\n`, body]);
      }
      const { text } = await received;
      expect(text).toMatch(/^HTTP\/1\.1 400 /);
      expect(text).toContain(
        `nests JSON deeper than the limit of ${WEBHOOK_BUDGET_DEFAULTS.maxJsonDepth} levels`,
      );
      expect(loop.stop()).toBeLessThan(1_000);
      expect(unhandled).toEqual([]);
      expect(admission(await post(hook, review('after-deep'))).allowed).toBe(true);
      // The deployed heap is 160 MB; parsing this body used to exhaust it.
      expect(heapAfterGc() - heapBefore).toBeLessThan(32 * MiB);
    },
  );

  it('refuses a document of millions of tiny values with 400 naming the value limit', async () => {
    // 2.3 million empty objects in 7 MB would cost ~130 MB of heap once parsed.
    const count = Math.floor((WEBHOOK_BUDGET_DEFAULTS.maxRequestBytes - 100) / 3);
    const body = `[${'{},'.repeat(count - 1)}{}]`;
    const heapBefore = heapAfterGc();
    const answer = await post(hook, body).catch((err: Error) => ({ status: 0, text: err.message }));
    expect(answer.status).toBe(400);
    expect(answer.text).toContain(
      `more JSON values than the limit of ${WEBHOOK_BUDGET_DEFAULTS.maxJsonValues}`,
    );
    expect(heapAfterGc() - heapBefore).toBeLessThan(32 * MiB);
    expect(admission(await post(hook, review('after-wide'))).allowed).toBe(true);
  });

  it('accepts a large but ordinary review (a 2 MiB pod) under the default budgets', async () => {
    const object = { metadata: { name: 'big', annotations: { blob: 'x'.repeat(2 * MiB) } } };
    expect(admission(await post(hook, review('big', object)))).toMatchObject({ uid: 'big', allowed: true });
  });
});

describe('webhook memory held by concurrent requests', () => {
  it('answers 503 when bodies in flight would exceed maxInFlightBytes, and serves again once they finish', async () => {
    const hook = await startWebhook({ maxInFlightBytes: 2 * MiB });
    try {
      // Holds a reservation: 690 KiB of a declared 700 KiB sent (estimated 1.38 MiB; memory is reserved for bytes
      // received, not declared).
      const holder = await connectTls(hook);
      const held = collect(holder);
      holder.write(`${HEAD}Content-Length: ${700 * 1024}\r\n\r\n{"a":"${'x'.repeat(690 * 1024 - 6)}`);
      // Wait (by state, not by time) until the server has taken the holder's reservation.
      while (hook.server.stats().inFlightBytes < 2 * 690 * 1024)
        await new Promise((resolve) => setTimeout(resolve, 10));
      const refused = await post(hook, review('second', { data: 'x'.repeat(700 * 1024) }));
      expect(refused.status).toBe(503);
      expect(refused.text).toContain(`exceed the ${2 * MiB} byte memory budget`);
      expect(hook.server.stats().refusals.busy).toBe(1);
      // The holder gives up: its reservation is released and normal reviews fit again.
      holder.destroy();
      await held;
      expect(admission(await post(hook, review('third', { data: 'x'.repeat(700 * 1024) }))).allowed).toBe(
        true,
      );
      expect(hook.server.stats().inFlightBytes).toBe(0);
    } finally {
      await hook.stop();
    }
  });
});
