import { describe, expect, it } from 'vitest';
import type { KubeObject } from './object.js';
import { OwnWrites } from './own-writes.js';

const cm = (name: string, resourceVersion: string): KubeObject => ({
  metadata: { namespace: 'ns', name, resourceVersion },
});

describe('OwnWrites', () => {
  it('drops only the event that echoes a tracked write, once', async () => {
    const own = new OwnWrites();
    const predicate = own.predicate<KubeObject>();
    await own.track('ns/a', () => Promise.resolve(cm('a', '10')));
    expect(predicate.update?.(cm('a', '9'), cm('a', '10'))).toBe(false);
    // The same version again (e.g. a periodic resync) and anyone's later change are reconciled.
    expect(predicate.update?.(cm('a', '10'), cm('a', '10'))).toBe(true);
    expect(predicate.update?.(cm('a', '10'), cm('a', '11'))).toBe(true);
    expect(own.size).toBe(0);
  });

  it('drops an echo that arrives before the write returns, and remembers nothing afterwards', async () => {
    const missed: KubeObject[] = [];
    const own = new OwnWrites((o) => missed.push(o));
    const predicate = own.predicate<KubeObject>();
    await own.track('ns/a', async () => {
      expect(predicate.update?.(cm('a', '9'), cm('a', '10'))).toBe(false);
      return cm('a', '10');
    });
    expect(missed).toEqual([]);
    expect(own.size).toBe(0);
    expect(predicate.update?.(cm('a', '10'), cm('a', '11'))).toBe(true);
  });

  it('hands over a change by someone else that arrived while the write was in flight', async () => {
    const missed: KubeObject[] = [];
    const own = new OwnWrites((o) => missed.push(o));
    const predicate = own.predicate<KubeObject>();
    await own.track('ns/a', async () => {
      expect(predicate.update?.(cm('a', '8'), cm('a', '9'))).toBe(false);
      expect(predicate.update?.(cm('a', '9'), cm('a', '10'))).toBe(false);
      return cm('a', '10');
    });
    // The version it replaced too: a watch whose keys depend on the object (an owner annotation, say) must queue
    // the old key as well, as Controller.watch does for an update it passes.
    expect(missed).toEqual([cm('a', '9'), cm('a', '8')]);
  });

  it('hands over what was held when the write fails, and rethrows', async () => {
    const missed: KubeObject[] = [];
    const own = new OwnWrites((o) => missed.push(o));
    const predicate = own.predicate<KubeObject>();
    const failing = own.track('ns/a', async () => {
      predicate.update?.(cm('a', '8'), cm('a', '9'));
      throw new Error('conflict');
    });
    await expect(failing).rejects.toThrow('conflict');
    expect(missed).toEqual([cm('a', '9'), cm('a', '8')]);
    expect(own.size).toBe(0);
  });

  it('lets other objects through during a write, drops the add of a created object, forgets deleted ones', async () => {
    const own = new OwnWrites();
    const predicate = own.predicate<KubeObject>();
    await own.track('ns/created', async () => {
      expect(predicate.add?.(cm('other', '4'))).toBe(true);
      return cm('created', '5');
    });
    expect(predicate.add?.(cm('created', '5'))).toBe(false);
    await own.track('ns/gone', () => Promise.resolve(cm('gone', '6')));
    expect(predicate.delete?.(cm('gone', '6'), false)).toBe(true);
    expect(own.size).toBe(0);
  });
});
