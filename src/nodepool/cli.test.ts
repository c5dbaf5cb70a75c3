// The defaults `tessera nodepool run --help` states are the components' own: the flags have no commander default
// (so the component's applies), and the help text must not drift from it.
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerNodePoolCommands } from './cli.js';
import { DEFAULT_STALE_AFTER_MS } from './management/nodepool-controller.js';
import { DEFAULT_HEARTBEAT_INTERVAL_MS } from './tuning/status-writer.js';

function runHelp(): string {
  const program = new Command();
  registerNodePoolCommands(program);
  const nodepool = program.commands.find((c) => c.name() === 'nodepool');
  const run = nodepool?.commands.find((c) => c.name() === 'run');
  if (!run) throw new Error('no `nodepool run` command');
  return run.helpInformation().replace(/\s+/g, ' ');
}

describe('tessera nodepool run --help', () => {
  it("names the components' defaults, in the flags' unit (seconds)", () => {
    const help = runHelp();
    expect(help).toMatch(
      new RegExp(`--heartbeat <seconds> .*\\(default: ${DEFAULT_HEARTBEAT_INTERVAL_MS / 1000}\\)`),
    );
    expect(help).toMatch(
      new RegExp(`--stale-after <seconds> .*?\\(default: ${DEFAULT_STALE_AFTER_MS / 1000}\\)`),
    );
  });
});
