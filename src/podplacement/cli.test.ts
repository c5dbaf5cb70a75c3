// The defaults `tessera podplacement operator --help` states are the operator's own: most flags have no commander
// default (so the operator's applies), and the help text must not drift from it when a constant changes.
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerPodPlacementCommands } from './cli.js';
import { DEFAULT_CONTROLLER_LEASE_STALE_AFTER_MS } from './controller-liveness.js';
import { DEFAULT_WORKERS, defaultInspectionSlotCaps } from './inspection-slots.js';
import { DEFAULT_INSPECTION_DEADLINE_MS, DEFAULT_RETRY_BASE_DELAY_MS } from './retry-schedule.js';
import {
  DEFAULT_PROBE_PORT,
  DEFAULT_WEBHOOK_MAX_CONNECTIONS,
  DEFAULT_WEBHOOK_PORT,
} from '../runtime/light.js';

function operatorHelp(): string {
  const program = new Command();
  registerPodPlacementCommands(program);
  const operator = program.commands
    .find((c) => c.name() === 'podplacement')
    ?.commands.find((c) => c.name() === 'operator');
  if (!operator) throw new Error('no `podplacement operator` command');
  return operator.helpInformation().replace(/\s+/g, ' ');
}

/** The default the help states for `flag`: the text of the first "(default: ...)" after it. */
function statedDefault(help: string, flag: string): string | undefined {
  const at = help.indexOf(`${flag} `);
  if (at === -1) return undefined;
  const open = help.indexOf('(default: ', at);
  return help.slice(open + '(default: '.length, help.indexOf(')', open));
}

describe('tessera podplacement operator --help', () => {
  const help = operatorHelp();

  it("states the operator's defaults", () => {
    expect(statedDefault(help, '--workers')).toBe(String(DEFAULT_WORKERS));
    expect(statedDefault(help, '--webhook-port')).toBe(String(DEFAULT_WEBHOOK_PORT));
    expect(statedDefault(help, '--probe-port')).toBe(String(DEFAULT_PROBE_PORT));
    expect(statedDefault(help, '--webhook-max-connections')).toBe(String(DEFAULT_WEBHOOK_MAX_CONNECTIONS));
    expect(statedDefault(help, '--retry-base-delay-ms')).toBe(String(DEFAULT_RETRY_BASE_DELAY_MS));
    expect(statedDefault(help, '--inspection-deadline-ms')).toBe(String(DEFAULT_INSPECTION_DEADLINE_MS));
    expect(statedDefault(help, '--controller-lease-stale-after-ms')).toMatch(
      new RegExp(`^${DEFAULT_CONTROLLER_LEASE_STALE_AFTER_MS},`),
    );
  });

  it('states the inspection caps that the default number of workers gives', () => {
    const caps = defaultInspectionSlotCaps(DEFAULT_WORKERS);
    expect(statedDefault(help, '--max-inspections-per-namespace')).toContain(
      `${caps.maxInspectionsPerNamespace} with ${DEFAULT_WORKERS} workers`,
    );
    expect(statedDefault(help, '--max-inspections-per-registry')).toContain(
      `${caps.maxInspectionsPerRegistry} with ${DEFAULT_WORKERS} workers`,
    );
  });
});
