import { describe, expect, it } from 'vitest';
import { ValidatingWebhookGate } from './webhook-registrar.js';

describe('ValidatingWebhookGate', () => {
  it('lets config writers through at once when this process does not manage the configuration', async () => {
    const gate = new ValidatingWebhookGate(true);
    await gate.wait(new AbortController().signal);
    await expect(gate.opened).resolves.toBeUndefined();
  });

  it('holds config writers until the configuration is written', async () => {
    const gate = new ValidatingWebhookGate(false);
    let passed = false;
    const waiting = gate.wait(new AbortController().signal).then(() => (passed = true));
    await Promise.resolve();
    expect(passed).toBe(false);
    gate.open();
    await waiting;
    expect(passed).toBe(true);
  });

  it('releases a waiter when its signal aborts, without opening', async () => {
    const gate = new ValidatingWebhookGate(false);
    const stop = new AbortController();
    const waiting = gate.wait(stop.signal);
    stop.abort();
    await waiting;
    let opened = false;
    void gate.opened.then(() => (opened = true));
    await Promise.resolve();
    expect(opened).toBe(false);
  });
});
