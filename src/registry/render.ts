// Renders an inspection for people (a table) or programs (JSON; YAML is produced by the caller from the same
// document). Pure: returns the text, never prints.
import type { ImageInspection } from './inspector.js';
import { describeShortNameChoice } from './short-names.js';

/** The formats of `tessera image inspect -o`. */
export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The machine-readable document printed by `-o json|yaml` (stable field names, variant as null when absent). */
export function inspectionDocument(inspection: ImageInspection): Record<string, unknown> {
  return {
    reference: inspection.reference,
    digest: inspection.digest,
    mediaType: inspection.mediaType,
    kind: inspection.kind,
    architectures: [...inspection.architectures],
    operatorBundle: inspection.operatorBundle,
    source: inspection.source,
    platforms: inspection.platforms.map((p) => ({
      os: p.os,
      architecture: p.architecture,
      variant: p.variant ?? null,
      digest: p.digest,
    })),
    // Index entries left out (attestations, unknown or invalid platforms), so a surprising result can be explained.
    ...(inspection.skippedEntries ? { skippedEntries: { ...inspection.skippedEntries } } : {}),
    // For a short name: the candidates in order and what each gave, so the choice can be checked.
    ...(inspection.shortName
      ? {
          shortName: {
            name: inspection.shortName.name,
            rule: inspection.shortName.rule,
            candidates: inspection.shortName.candidates.map((c) => ({ ...c })),
          },
        }
      : {}),
  };
}

function columns(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + 2)))
        .join('')
        .trimEnd(),
    )
    .join('\n');
}

export function renderInspectionTable(inspection: ImageInspection): string {
  const header = columns([
    ['IMAGE', inspection.reference],
    ...(inspection.source !== inspection.reference.replace(/[:@][^/]*$/, '')
      ? [['SOURCE', inspection.source]]
      : []),
    ['DIGEST', inspection.digest],
    ['MEDIA TYPE', inspection.mediaType],
    [
      'ARCHITECTURES',
      inspection.architectures.join(', ') +
        (inspection.operatorBundle ? ' (operator bundle: runs nowhere, fits every node)' : ''),
    ],
  ]);
  const head = inspection.shortName
    ? `${header}\n\n${describeShortNameChoice(inspection.shortName)}`
    : header;
  if (inspection.platforms.length === 0) return `${head}\n`;
  const platforms = columns([
    ['OS', 'ARCH', 'VARIANT', 'DIGEST'],
    ...inspection.platforms.map((p) => [p.os || '-', p.architecture, p.variant ?? '-', p.digest]),
  ]);
  return `${head}\n\n${platforms}\n`;
}
