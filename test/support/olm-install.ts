// What an InstallPlan creates before a CSV, for tests that install a CSV directly (OLM's catalog path cannot run
// its bundle-unpack pod under kwok): the CSV's ServiceAccounts, and a Role/RoleBinding or ClusterRole/
// ClusterRoleBinding per permission entry. OLM checks these as the CSV's requirements before it installs.

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface CsvPermissions {
  metadata: { name: string };
  spec: {
    install: {
      spec: {
        permissions?: { serviceAccountName: string; rules: PolicyRule[] }[];
        clusterPermissions?: { serviceAccountName: string; rules: PolicyRule[] }[];
      };
    };
  };
}

/** The objects to POST (API path and body), in order: ServiceAccounts first. */
export function csvPermissionObjects(
  csv: CsvPermissions,
  namespace: string,
): { path: string; body: object }[] {
  const spec = csv.spec.install.spec;
  const permissions = spec.permissions ?? [];
  const clusterPermissions = spec.clusterPermissions ?? [];
  const accounts = new Set([...permissions, ...clusterPermissions].map((p) => p.serviceAccountName));
  const objects: { path: string; body: object }[] = [...accounts].map((name) => ({
    path: `/api/v1/namespaces/${namespace}/serviceaccounts`,
    body: { metadata: { name } },
  }));
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const grant = (entries: typeof permissions, kind: 'Role' | 'ClusterRole', base: string): void => {
    for (const [i, p] of entries.entries()) {
      const name = `${csv.metadata.name}-${p.serviceAccountName}-${i}`;
      objects.push(
        { path: `${base}/${kind.toLowerCase()}s`, body: { metadata: { name }, rules: p.rules } },
        {
          path: `${base}/${kind.toLowerCase()}bindings`,
          body: {
            metadata: { name },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
            subjects: [{ kind: 'ServiceAccount', name: p.serviceAccountName, namespace }],
          },
        },
      );
    }
  };
  grant(permissions, 'Role', `${rbac}/namespaces/${namespace}`);
  grant(clusterPermissions, 'ClusterRole', rbac);
  return objects;
}
