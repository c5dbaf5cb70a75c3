#!/usr/bin/env node
// The `tessera` command. Each area registers its own sub-commands from a small `cli.ts` that imports only
// commander's types; the implementation is loaded with a dynamic import inside the action, so a command pays only for
// the code it runs (a bare `tessera image inspect` must start nearly as fast as `node -e 0`).
import * as nodeModule from 'node:module';
import type * as Commander from 'commander';

// Node 22.1+ caches compiled code between runs, in $NODE_COMPILE_CACHE or the OS temp dir (never the install
// directory); absent on Node 20. A cache that cannot be used (read-only or full disk) only costs the speed-up.
try {
  (nodeModule as unknown as { enableCompileCache?: () => unknown }).enableCompileCache?.();
} catch {
  // Start without the cache.
}

const require = nodeModule.createRequire(import.meta.url);
// commander is CommonJS: require() skips the ESM wrapper's export scan (cjs-module-lexer), a measurable part of
// a short command's start-up.
const { Command, CommanderError, Option } = require('commander') as typeof Commander;
// package.json sits two levels up from both src/cli and dist/cli.
const { version } = require('../../package.json') as { version: string };

const program = new Command('tessera')
  .description('Tessera: OpenShift/Kubernetes controllers (pod placement, update status, NodePool status)')
  .version(version, '-V, --version', 'print the version and exit')
  // Options of the program, so they are the same in every command; read by src/cli/logging.ts.
  .addOption(
    new Option(
      '--log-format <format>',
      'logs: text (for people), json, or auto (text on a terminal, else json)',
    )
      .choices(['auto', 'text', 'json'])
      .default('auto'),
  )
  .option(
    '--log-level <level>',
    "fatal, error, warn, info, debug, trace or silent (default: $TESSERA_LOG_LEVEL, else the command's)",
  )
  .showHelpAfterError()
  .exitOverride();

// Each top-level command's registration, loaded only when needed: `tessera image inspect ...` loads the image
// commands alone, `tessera --version` none; help, errors and anything else load all of them.
const commandGroups: Readonly<Record<string, () => Promise<(program: Commander.Command) => void>>> = {
  start: async () => (await import('./start-command.js')).registerStartCommand,
  dashboard: async () => (await import('../dashboard/cli.js')).registerDashboardCommand,
  'console-plugin': async () => (await import('../dashboard/cli.js')).registerConsolePluginCommand,
  dev: async () => {
    const [{ registerDevCommands }, { registerSimulateUpdateCommand }] = await Promise.all([
      import('../devcluster/cli.js'),
      import('../demo/cli.js'),
    ]);
    return (p) => registerSimulateUpdateCommand(registerDevCommands(p));
  },
  image: async () => (await import('../registry/cli.js')).registerImageCommands,
  nodepool: async () => (await import('../nodepool/cli.js')).registerNodePoolCommands,
  podplacement: async () => (await import('../podplacement/cli.js')).registerPodPlacementCommands,
  upgrade: async () => (await import('../updatestatus/cli.js')).registerUpgradeCommands,
};
const args = process.argv.slice(2);
const first = args.find((arg) => !arg.startsWith('-'));
const groups =
  first !== undefined && Object.hasOwn(commandGroups, first)
    ? [first]
    : first === undefined && args.some((arg) => arg === '-V' || arg === '--version')
      ? []
      : Object.keys(commandGroups);
const loaders = groups.flatMap((name) => commandGroups[name] ?? []);
for (const register of await Promise.all(loaders.map((load) => load()))) register(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`error: ${message}\n`);
  if (process.env.TESSERA_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  process.exit(1);
}
