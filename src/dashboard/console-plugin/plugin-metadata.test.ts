// The plugin's extensions against the console SDK's own schema. The SDK's build check accepts any extension as a
// "custom" one (its schema's CustomExtension matches every {type, properties}), so a misspelt property of a
// console extension would pass it; here each extension must match a SUPPORTED console extension of its type.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  CONSOLE_EXTENSIONS,
  CONSOLE_PLUGIN_NAME,
  EXPOSED_MODULE,
  consolePluginMetadata,
  referencedExports,
  type EncodedExtension,
} from './plugin-metadata.js';

const require = createRequire(import.meta.url);
const schema = require('@openshift-console/dynamic-plugin-sdk-webpack/schema/console-extensions.json') as {
  definitions: Record<string, unknown>;
};
/** The one extension of `type` (fails the test when there is not exactly one). */
function extensionOf(type: string): EncodedExtension {
  const found = CONSOLE_EXTENSIONS.filter((e) => e.type === type);
  expect(found).toHaveLength(1);
  return found[0] as EncodedExtension;
}

const { SchemaValidator } =
  require('@openshift-console/dynamic-plugin-sdk-webpack/lib/validation/SchemaValidator.js') as {
    SchemaValidator: new (description: string) => {
      validate(schema: unknown, data: unknown): { hasErrors(): boolean; formatErrors(): string };
    };
  };

/** Errors of `extension` as one of the console's supported extensions ('' when it is one). */
function asSupportedExtension(extension: EncodedExtension): string {
  const supported = { $ref: '#/definitions/SupportedExtension', definitions: schema.definitions };
  const result = new SchemaValidator(extension.type).validate(supported, structuredClone(extension));
  return result.hasErrors() ? result.formatErrors() : '';
}

describe('console plugin metadata', () => {
  it('declares only supported console extensions, each well-formed for its type', () => {
    expect(CONSOLE_EXTENSIONS.map((e) => e.type)).toEqual([
      'console.page/route',
      'console.navigation/href',
      'console.tab/horizontalNav',
    ]);
    for (const extension of CONSOLE_EXTENSIONS) expect(asSupportedExtension(extension)).toBe('');
  });

  it('would refuse a console extension missing a required property', () => {
    const route = extensionOf('console.page/route');
    const { path: _path, ...withoutPath } = route.properties;
    expect(asSupportedExtension({ type: route.type, properties: withoutPath })).not.toBe('');
    const nav = extensionOf('console.navigation/href');
    const { href: _href, ...withoutHref } = nav.properties;
    expect(asSupportedExtension({ type: nav.type, properties: withoutHref })).not.toBe('');
  });

  it('links the navigation item to the page route and names exports of the one exposed module', () => {
    const route = extensionOf('console.page/route');
    const nav = extensionOf('console.navigation/href');
    expect(nav.properties['href']).toBe(route.properties['path']);
    expect(referencedExports()).toEqual(
      new Map([[EXPOSED_MODULE, ['TesseraPage', 'TesseraClusterSettingsTab']]]),
    );
    const metadata = consolePluginMetadata('1.2.3');
    expect(Object.keys(metadata.exposedModules)).toEqual([EXPOSED_MODULE]);
    expect(metadata).toMatchObject({ name: CONSOLE_PLUGIN_NAME, version: '1.2.3' });
    expect(metadata.dependencies['@console/pluginAPI']).toBe('>=4.22.0-0');
  });
});
