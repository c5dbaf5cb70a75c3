// Where Tessera's documentation lives, for links written into the cluster (insight remediations, the CSV's links):
// one place, so a move of the repository changes one line.

/** The project's source repository. */
export const PROJECT_REPOSITORY_URL = 'https://github.com/tessera/tessera';

/** A section of the README on the default branch, by its GitHub anchor (e.g. `update-status-informers`). */
export function readmeSectionUrl(anchor: string): string {
  return `${PROJECT_REPOSITORY_URL}/blob/main/README.md#${anchor}`;
}
