// Builds the OpenShift console dynamic plugin into dist/console-plugin (`npm run build:console-plugin`, part of
// `npm run build`): webpack 5 with the console SDK's ConsoleRemotePlugin, which writes plugin-manifest.json and
// plugin-entry.js, shares React and the SDK with the console instead of bundling them, and fails the build when an
// extension does not match the SDK's schema or names an export the exposed module lacks. The console brings
// PatternFly's styles; the bundle carries only the dashboard's own and uPlot's.
//   tsx src/dashboard/page/console-plugin/build.ts [--out-dir DIR]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConsoleRemotePlugin } from '@openshift-console/dynamic-plugin-sdk-webpack';
import webpack from 'webpack';
import {
  CONSOLE_EXTENSIONS,
  consolePluginMetadata,
  type EncodedExtension,
} from '../../console-plugin/plugin-metadata.js';
import { ConsolePluginBuildError } from '../../errors.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../../..');
export const DEFAULT_OUT_DIR = path.join(root, 'dist/console-plugin');

export function consolePluginWebpackConfig(
  outDir: string,
  extensions: readonly EncodedExtension[] = CONSOLE_EXTENSIONS,
): webpack.Configuration {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  return {
    mode: 'production',
    // ConsoleRemotePlugin makes the entry (plugin-entry.js) from the exposed modules.
    entry: {},
    context: path.resolve(here, '..'),
    output: {
      path: outDir,
      filename: '[name]-bundle-[contenthash].min.js',
      chunkFilename: '[name]-chunk-[chunkhash].min.js',
      clean: true,
    },
    resolve: {
      extensions: ['.ts', '.tsx', '.js', '.jsx'],
      // The sources import './x.js' (NodeNext style) for files that are x.ts / x.tsx.
      extensionAlias: { '.js': ['.ts', '.tsx', '.js'] },
    },
    module: {
      rules: [
        {
          test: /\.tsx?$/,
          exclude: /node_modules/,
          use: {
            loader: 'ts-loader',
            options: {
              configFile: path.join(here, 'tsconfig.json'),
              // Types are checked by `npm run lint` (tsc -p src/dashboard/page/tsconfig.json); this only transpiles.
              transpileOnly: true,
            },
          },
        },
        { test: /\.css$/, use: ['style-loader', 'css-loader'] },
        { test: /\.m?js$/, resolve: { fullySpecified: false } },
      ],
    },
    plugins: [
      new ConsoleRemotePlugin({
        pluginMetadata: consolePluginMetadata(pkg.version),
        extensions: extensions.map((e) => structuredClone(e)) as never,
        sharedDynamicModuleSettings: { modulePaths: [path.join(root, 'node_modules')] },
      }),
    ],
    devtool: false,
    optimization: { chunkIds: 'deterministic', minimize: true },
    performance: { hints: false },
  };
}

/**
 * Node's globals used bare by the bundled code (the browser has neither): webpack fails on a `node:` import but
 * leaves a free `Buffer` or `process` for the browser to throw on. Guarded uses such as lodash's `root.Buffer` are
 * property accesses and do not match; webpack replaces `process.env.NODE_ENV` in production builds.
 */
const NODE_GLOBAL_USE = /(?<![\w$.])(Buffer\.[a-zA-Z]+\(|process\.(?!env\.NODE_ENV)[a-zA-Z]+)/;

/** `file: use` for each built script that uses a Node global (what the browser would throw on). */
export function nodeGlobalsIn(outDir: string): string[] {
  const found: string[] = [];
  for (const file of readdirSync(outDir).filter((f) => f.endsWith('.js'))) {
    const match = NODE_GLOBAL_USE.exec(readFileSync(path.join(outDir, file), 'utf8'));
    if (match) found.push(`${file}: ${match[0]}`);
  }
  return found;
}

/** Runs the build; rejects with ConsolePluginBuildError for webpack's errors (the SDK's validation among them). */
export function buildConsolePlugin(
  outDir: string = DEFAULT_OUT_DIR,
  extensions: readonly EncodedExtension[] = CONSOLE_EXTENSIONS,
): Promise<webpack.Stats> {
  return new Promise((resolve, reject) => {
    webpack(consolePluginWebpackConfig(outDir, extensions), (err, stats) => {
      if (err) return reject(new ConsolePluginBuildError(err.message));
      if (!stats) return reject(new ConsolePluginBuildError('webpack returned no result'));
      if (stats.hasErrors())
        return reject(new ConsolePluginBuildError(stats.toString({ all: false, errors: true })));
      const nodeGlobals = nodeGlobalsIn(outDir);
      if (nodeGlobals.length > 0)
        return reject(
          new ConsolePluginBuildError(
            `the bundle uses Node globals the browser lacks (use TextEncoder, Uint8Array...):\n${nodeGlobals.join('\n')}`,
          ),
        );
      resolve(stats);
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--out-dir');
  const given = at > 0 ? process.argv[at + 1] : undefined;
  const outDir = given ? path.resolve(given) : DEFAULT_OUT_DIR;
  const stats = await buildConsolePlugin(outDir);
  if (stats.hasWarnings()) process.stderr.write(`${stats.toString({ all: false, warnings: true })}\n`);
  process.stdout.write(`console plugin built into ${path.relative(process.cwd(), outDir) || '.'}\n`);
}
