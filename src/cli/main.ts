#!/usr/bin/env node
// The `tessera` command. Each area registers its own sub-commands from a small `cli.ts` that imports only
// commander; the implementation is loaded with a dynamic import inside the action, so a command pays only for
// the code it runs (a bare `tessera image inspect` must start nearly as fast as `node -e 0`).
import { Command, CommanderError } from 'commander';
import { registerDevCommands } from '../devcluster/cli.js';
import { registerImageCommands } from '../registry/cli.js';
import { registerNodePoolCommands } from '../nodepool/cli.js';
import { registerPodPlacementCommands } from '../podplacement/cli.js';
import { registerUpgradeCommands } from '../updatestatus/cli.js';
import { registerStartCommand } from './start-command.js';

const program = new Command('tessera')
  .description('Tessera: OpenShift/Kubernetes controllers (pod placement, update status, NodePool status)')
  .showHelpAfterError()
  .exitOverride();

registerStartCommand(program);
registerDevCommands(program);
registerImageCommands(program);
registerNodePoolCommands(program);
registerPodPlacementCommands(program);
registerUpgradeCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`error: ${message}\n`);
  if (process.env.TESSERA_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  process.exit(1);
}
