// What `npm run build` emits to dist/ is what users install and run, and an install without devDependencies
// (`npm ci --omit=dev`, the operator image) must still load it. So every package the emitted JavaScript imports
// must be a dependency in package.json. The files are the ones tsconfig.build.json compiles: its include/exclude
// set plus any file those import; of each, the imports tsc keeps when it emits it (type-only ones are erased).
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface PackageJson {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** The package a bare import specifier names ('@scope/name/sub' -> '@scope/name'); undefined for files and builtins. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:'))
    return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
  return builtinModules.includes(name) ? undefined : name;
}

/**
 * The module specifiers `source` keeps in its emitted JavaScript: static imports and re-exports that are not
 * type-only, and `import()` calls. Under verbatimModuleSyntax (checked below) this is exactly what tsc emits:
 * it drops only `import type` / `export type` and keeps every other import as written.
 */
function emittedImports(fileName: string, source: string): string[] {
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) ||
      (ts.isExportDeclaration(node) && !node.isTypeOnly)
    ) {
      if (node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
        specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
  return specifiers;
}

/** Each import of a package that is not in `dependencies`, as `file: specifier (why)`. */
function nonDependencyImports(
  importsByFile: ReadonlyMap<string, readonly string[]>,
  pkg: PackageJson,
): string[] {
  const dependencies = new Set(Object.keys(pkg.dependencies ?? {}));
  const devDependencies = new Set(Object.keys(pkg.devDependencies ?? {}));
  const found: string[] = [];
  for (const [file, specifiers] of importsByFile)
    for (const specifier of specifiers) {
      const name = packageOf(specifier);
      if (name === undefined || dependencies.has(name)) continue;
      const why = devDependencies.has(name) ? 'a devDependency' : 'not in package.json';
      found.push(`${file}: ${specifier} (${why})`);
    }
  return found;
}

/** What `npm run build` compiles: its compiler options, and each file's emitted imports by project-relative path. */
function buildSources(): { options: ts.CompilerOptions; importsByFile: Map<string, string[]> } {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.build.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new TypeError(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  if (config === undefined) throw new TypeError('tsconfig.build.json cannot be read');
  const importsByFile = new Map<string, string[]>();
  const pending = [...config.fileNames];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    const relative = path.relative(root, file).split(path.sep).join('/');
    if (importsByFile.has(relative)) continue;
    const specifiers = emittedImports(file, readFileSync(file, 'utf8'));
    importsByFile.set(relative, specifiers);
    // A file outside the include set that a compiled file imports is compiled too.
    for (const specifier of specifiers)
      if (specifier.startsWith('.'))
        pending.push(path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts')));
  }
  return { options: config.options, importsByFile };
}

describe('the product build (dist/)', () => {
  it('imports only packages listed in dependencies', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as PackageJson;
    const { options, importsByFile } = buildSources();
    // What emittedImports keeps is what tsc emits only under verbatimModuleSyntax.
    expect(options.verbatimModuleSyntax).toBe(true);
    // The walk saw the whole product: the CLI entry point and what it loads.
    expect(importsByFile.has('src/cli/main.ts')).toBe(true);
    expect([...importsByFile.values()].flat()).toContain('@kubernetes/client-node');
    expect(nonDependencyImports(importsByFile, pkg)).toEqual([]);
  }, 60_000); // parses every product file: about a second, several on a loaded 2-core machine

  it('is checked on the emitted imports: static, re-exported and dynamic, but not type-only ones', () => {
    const source = [
      "import { format } from 'prettier';",
      "import type { Mock } from 'vitest';",
      "import { parse } from 'yaml';",
      "import { readFile } from 'node:fs/promises';",
      "import { helper } from './b.js';",
      "export { defineConfig } from 'vitest/config';",
      "export type { Options } from 'tsx';",
      "export const load = () => import('@scope/tool/sub');",
      "export const m: Mock | import('typescript').Node | undefined = undefined;",
      'export const x = [format, parse, readFile, helper];',
    ].join('\n');
    const imports = new Map([['src/a.ts', emittedImports('src/a.ts', source)]]);
    const pkg: PackageJson = {
      dependencies: { yaml: '2' },
      devDependencies: { prettier: '3', vitest: '4', tsx: '4', typescript: '5' },
    };
    expect(nonDependencyImports(imports, pkg)).toEqual([
      'src/a.ts: prettier (a devDependency)',
      'src/a.ts: vitest/config (a devDependency)',
      'src/a.ts: @scope/tool/sub (not in package.json)',
    ]);
  });
});
