// The unit of `npm run generate`: each area's `generatedFiles()` (in its api/crd.ts) returns the files it derives
// from its own definitions, and hack/generate.ts, the one tool, writes them or checks them for drift. Areas only
// render: nothing here or in an area's generatedFiles() touches the file system.

/** A file the repository commits but nobody edits: its path and its exact, deterministic content. */
export interface GeneratedFile {
  /** Relative to the project root, with `/` separators (`deploy/crds/dev/<group>_<plural>.yaml`). */
  readonly path: string;
  readonly content: string;
}
