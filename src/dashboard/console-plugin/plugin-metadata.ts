// The console plugin's identity and what it adds to the OpenShift console: read by its build (the SDK's webpack
// plugin writes plugin-manifest.json from it and validates every extension against the SDK's schema) and by the
// manifest renderer (the ConsolePlugin's name must be the plugin's name). Plain data, no imports.

/** metadata.name of the ConsolePlugin, the plugin's name in its manifest, the CSV's `console.openshift.io/plugins`. */
export const CONSOLE_PLUGIN_NAME = 'tessera-console-plugin';
/** The console route of the plugin's page (under the console's own base path). */
export const CONSOLE_PLUGIN_ROUTE = '/tessera';
/** The console release whose SDK (4.22: React 18, PatternFly 6) the plugin is built with, as a semver range. */
export const CONSOLE_API_RANGE = '>=4.22.0-0';
/** The webpack module that holds the plugin's React components (the key of exposedModules). */
export const EXPOSED_MODULE = 'TesseraDashboard';

export interface ConsolePluginMetadata {
  readonly name: string;
  readonly version: string;
  readonly displayName: string;
  readonly description: string;
  readonly exposedModules: Readonly<Record<string, string>>;
  readonly dependencies: Readonly<Record<string, string>>;
}

export function consolePluginMetadata(version: string): ConsolePluginMetadata {
  return {
    name: CONSOLE_PLUGIN_NAME,
    version,
    displayName: 'Tessera',
    description:
      'Update progress, where pods were placed by architecture, and NodePool tuning: the views of `tessera dashboard` in the console.',
    exposedModules: { [EXPOSED_MODULE]: './console-plugin/TesseraDashboard' },
    dependencies: { '@console/pluginAPI': CONSOLE_API_RANGE },
  };
}

/** One extension as console-extensions.json declares it (`$codeRef`: `<exposed module>.<export>`). */
export interface EncodedExtension {
  readonly type: string;
  readonly properties: Readonly<Record<string, unknown>>;
}

const codeRef = (exported: string) => ({ $codeRef: `${EXPOSED_MODULE}.${exported}` });

/**
 * A page under Home in the administrator perspective, and a tab on Cluster Settings: that page is the details
 * page of the ClusterVersion `version`, and the console's HorizontalNav adds every `console.tab/horizontalNav`
 * whose model is the shown object's.
 */
export const CONSOLE_EXTENSIONS: readonly EncodedExtension[] = [
  {
    type: 'console.page/route',
    properties: { path: CONSOLE_PLUGIN_ROUTE, exact: true, component: codeRef('TesseraPage') },
  },
  {
    type: 'console.navigation/href',
    properties: {
      id: 'tessera-dashboard',
      name: 'Tessera',
      href: CONSOLE_PLUGIN_ROUTE,
      perspective: 'admin',
      section: 'home',
    },
  },
  {
    type: 'console.tab/horizontalNav',
    properties: {
      model: { group: 'config.openshift.io', version: 'v1', kind: 'ClusterVersion' },
      page: { name: 'Tessera', href: 'tessera' },
      component: codeRef('TesseraClusterSettingsTab'),
    },
  },
];

/** The exports the extensions name, by exposed module (what the build test loads and checks). */
export function referencedExports(
  extensions: readonly EncodedExtension[] = CONSOLE_EXTENSIONS,
): Map<string, string[]> {
  const refs = new Map<string, string[]>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === 'object' && value !== null) {
      const ref = (value as { $codeRef?: unknown }).$codeRef;
      if (typeof ref === 'string') {
        const [module = '', exported = 'default'] = ref.split('.');
        refs.set(module, [...(refs.get(module) ?? []), exported]);
      } else Object.values(value).forEach(visit);
    }
  };
  extensions.forEach((e) => visit(e.properties));
  return refs;
}
