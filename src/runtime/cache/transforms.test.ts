import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.js';
import { compactForCache, shareStrings, stripManagedFields } from './transforms.js';

const pod = (name: string): KubeObject =>
  JSON.parse(
    JSON.stringify({
      metadata: {
        name,
        namespace: 'team-a',
        managedFields: [{ manager: 'kubectl', operation: 'Update' }],
        labels: { 'app.kubernetes.io/name': 'frontend' },
      },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'quay.io/example/app:v1.2.3',
            imagePullPolicy: 'IfNotPresent',
            ports: [{ containerPort: 8080 }],
          },
        ],
        enableServiceLinks: true,
        priority: 0,
        overhead: null,
        note: 'x'.repeat(10_000),
      },
    }),
  ) as KubeObject;

describe('informer transforms', () => {
  it('drops managedFields and keeps every other field and value as it was', () => {
    const expected = pod('p');
    delete (expected.metadata as { managedFields?: unknown }).managedFields;
    expect(compactForCache(pod('p'))).toStrictEqual(expected);
    expect(stripManagedFields(pod('p'))).toStrictEqual(expected);
  });

  it('shares strings without changing them, whatever their length', () => {
    const a = shareStrings(pod('a'));
    const b = shareStrings(pod('b'));
    expect(a).toStrictEqual({ ...pod('a') });
    expect(b.metadata?.name).toBe('b');
    expect((a as { spec: { note: string } }).spec.note).toHaveLength(10_000);
  });

  it('handles objects nested far deeper than the call stack allows', () => {
    let deep: Record<string, unknown> = { leaf: 'a value longer than ten' };
    for (let i = 0; i < 200_000; i++) deep = { child: deep, label: 'nested-object-label' };
    const shared = shareStrings(deep);
    let depth = 0;
    for (let node = shared; node.child !== undefined; node = node.child as Record<string, unknown>) depth++;
    expect(depth).toBe(200_000);
  });

  it('leaves non-objects alone', () => {
    expect(shareStrings(null)).toBeNull();
    expect(shareStrings('a string longer than ten characters')).toBe('a string longer than ten characters');
    expect(shareStrings(42)).toBe(42);
  });
});
