// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Folder boundaries (enforced below for every non-test file under src/; tests, bench and the tools in hack/, such
// as the generators and the OLM bundle writer, may import anything, and src/ never imports them):
//
//   folder        may import
//   runtime       nothing outside src/runtime
//   registry      runtime
//   podplacement  runtime, registry (only through src/registry/index.ts), updatestatus (only its informer.ts)
//   updatestatus  runtime
//   nodepool      runtime, updatestatus (only its informer.ts)
//   devcluster    runtime
//   demo          anything but cli
//   dashboard     runtime, registry (only through src/registry/index.ts or light.ts), podplacement, updatestatus, nodepool
//   cli           anything (the command-line shell: it wires every folder, internals included)
//
// Outside src/runtime and src/cli, the runtime is imported only through src/runtime/index.ts, or
// src/runtime/light.ts (its part that loads no third-party module, for code on a command's start-up path), and the
// registry only through src/registry/index.ts, and update status only through src/updatestatus/informer.ts (the
// client side of its informer contract: pod placement and NodePool status contribute update insights). No product folder imports devcluster or demo. What src/ compiles to
// (dist/) imports only packages of `dependencies`, checked by test/unit/product-dependencies.test.ts.
// An area's own `cli.ts` (its commands' registration) may also import src/cli/logging.ts, which every command uses
// to build its logger, and src/cli/flags.ts, the parsers of every command's flags. Static imports are checked by
// no-restricted-imports, `import()` by no-restricted-syntax.
//
// Test doubles (src/runtime/testing: FakeClock, FakeListWatch) are imported by tests only, never by product code.
//
// Errors: every error thrown in src is a TesseraError (src/runtime/errors.ts) with a stable code, never a plain
// `Error` (tests may throw anything).

const AREAS = [
  'dashboard',
  'runtime',
  'registry',
  'podplacement',
  'updatestatus',
  'nodepool',
  'devcluster',
  'demo',
  'cli',
];

/** @type {Record<string, string[]>} area -> the areas it may import */
const MAY_IMPORT = {
  runtime: [],
  registry: ['runtime'],
  podplacement: ['runtime', 'registry', 'updatestatus'],
  updatestatus: ['runtime'],
  nodepool: ['runtime', 'updatestatus'],
  devcluster: ['runtime'],
  demo: AREAS.filter((a) => a !== 'cli'),
  dashboard: ['runtime', 'registry', 'podplacement', 'updatestatus', 'nodepool'],
};

/** @type {Record<string, string[]>} area -> the only modules of it other areas may import */
const ENTRY_POINTS = {
  runtime: ['index', 'light'],
  registry: ['index', 'light'],
  // For the product areas that are its informers; demo (which drives every area) is not limited to it.
  updatestatus: ['informer'],
};
/** @type {Record<string, string[]>} target area -> areas that may import more than its ENTRY_POINTS */
const ENTRY_POINT_EXEMPT = { updatestatus: ['demo', 'dashboard'] };

// Import specifiers in src are relative ('../runtime/index.js', '../../registry/index.js'); a folder named like an
// area inside another area would be mistaken for it, so areas have no such sub-folders.
const up = '^(\\.\\./)+';

/**
 * The import-specifier patterns `area` must not use.
 * @param {string} area
 * @param {{ cliLogging?: boolean }} [options]
 */
function forbiddenImports(area, options = {}) {
  const allowed = MAY_IMPORT[area] ?? [];
  const forbidden = AREAS.filter((a) => a !== area && !allowed.includes(a));
  if (options.cliLogging) forbidden.splice(forbidden.indexOf('cli'), 1);
  const patterns = [];
  if (forbidden.length > 0)
    patterns.push({
      regex: `${up}(${forbidden.join('|')})(/|$)`,
      message: `src/${area} may import only ${allowed.length > 0 ? allowed.join(', ') : 'src/runtime'} (see the boundaries at the top of eslint.config.js).`,
    });
  for (const [target, modules] of Object.entries(ENTRY_POINTS))
    if (target !== area && allowed.includes(target) && !(ENTRY_POINT_EXEMPT[target] ?? []).includes(area))
      patterns.push({
        regex: `${up}${target}/(?!(${modules.join('|')})\\.js$)`,
        message: `Import src/${target} only through ${modules.map((m) => `src/${target}/${m}.ts`).join(' or ')}.`,
      });
  patterns.push(TEST_DOUBLES);
  if (options.cliLogging)
    patterns.push({
      regex: `${up}cli/(?!(logging|flags)\\.js$)`,
      message: `An area's cli.ts may import only src/cli/logging.ts and src/cli/flags.ts from src/cli.`,
    });
  return patterns;
}

/** The runtime's test doubles (FakeClock, FakeListWatch) are for tests: no product file imports them. */
const TEST_DOUBLES = {
  regex: '(^|/)testing/',
  message:
    'src/runtime/testing holds test doubles: import it from tests only (the build leaves it out of dist/).',
};

/** no-restricted-syntax entries that refuse a plain `Error` (`new Error(...)`, `throw Error(...)`). */
const NO_PLAIN_ERROR = [
  'NewExpression[callee.name="Error"]',
  'ThrowStatement > CallExpression[callee.name="Error"]',
].map((selector) => ({
  selector,
  message:
    "Throw a TesseraError with a stable code (src/runtime/errors.ts, or the area's errors.ts), not a plain Error.",
}));

/**
 * The boundary rules for the files of `area`, for static imports and `import()`, with the rule against plain
 * errors (one no-restricted-syntax setting per file: a later one would replace, not extend, an earlier one).
 * @param {string} area
 * @param {string[]} files
 * @param {{ cliLogging?: boolean }} [options]
 */
function boundaryConfig(area, files, options) {
  const patterns = forbiddenImports(area, options);
  return {
    files,
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns }],
      // esquery regexes cannot hold a '/', so it is written \x2F.
      'no-restricted-syntax': [
        'error',
        ...NO_PLAIN_ERROR,
        ...patterns.map((p) => ({
          selector: `ImportExpression[source.value=/${p.regex.replaceAll('/', '\\x2F')}/]`,
          message: p.message,
        })),
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // One import declaration per module: types join the values as `type X` (`import { a, type B } from ...`).
      'no-duplicate-imports': 'error',
    },
  },
  // Lint that sees types: promises that are dropped or passed where a callback's result is ignored, awaits of
  // non-promises, and switches that miss a case of a union.
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
    },
  },
  // src/cli may import anything: only the rule against plain errors.
  {
    files: ['src/cli/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [TEST_DOUBLES] }],
      'no-restricted-syntax': ['error', ...NO_PLAIN_ERROR],
    },
  },
  ...Object.keys(MAY_IMPORT).map((area) => boundaryConfig(area, [`src/${area}/**/*.ts`])),
  ...Object.keys(MAY_IMPORT)
    .filter((area) => area !== 'runtime')
    .map((area) => boundaryConfig(area, [`src/${area}/cli.ts`], { cliLogging: true })),
);
