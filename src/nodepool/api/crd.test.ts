import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { crdsFor, renderCrds } from './crd.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Keywords a structural schema may not contain (the API server would reject the CRD). */
function nonStructural(value: unknown, at = '$'): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const found: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    if (['patternProperties', 'anyOf', 'oneOf', '$id', 'const'].includes(key)) found.push(`${at}.${key}`);
    found.push(...nonStructural(child, `${at}.${key}`));
  }
  return found;
}

describe('development CRDs', () => {
  it.each(renderCrds().map((c) => [c.file, c] as const))(
    '%s is up to date (npm run generate)',
    (file, crd) => {
      expect(readFileSync(path.join(root, file), 'utf8')).toBe(crd.yaml);
    },
  );

  it('contain only structural schemas', () => {
    for (const crd of renderCrds()) expect(nonStructural(crd.object)).toEqual([]);
  });

  it('split between the management and the hosted cluster', () => {
    expect(crdsFor('management').map((c) => c.name)).toEqual([
      'nodepools.hypershift.openshift.io',
      'hostedcontrolplanes.hypershift.openshift.io',
    ]);
    expect(crdsFor('hosted').map((c) => c.name)).toEqual([
      'performanceprofiles.performance.openshift.io',
      'profiles.tuned.openshift.io',
    ]);
  });
});
