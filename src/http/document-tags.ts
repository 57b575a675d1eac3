/**
 * The tags of a surface document, declared at its top with a line each: Swagger UI shows the line above each
 * group, and OpenAPI linters (Spectral's operation-tag-defined) expect every tag an operation uses to be
 * declared. Only the tags the document's operations use are listed, in this order.
 */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Subjects: 'Enrolment, subjects and their templates, QR codes and re-extraction',
  Operations: 'Verification, identification and checks, and the operations recorded for every biometric request',
  'Biometric data': 'Stored face and voice samples and their downloads',
  Images: 'Stored images of operations and subjects',
  Adjudication: 'Possible duplicates waiting for a human decision, and the decisions taken',
  Accounts: 'Accounts, their roles and passwords',
  Management: 'Settings, service information, cluster status and database maintenance',
  Licensing: 'Licences, usage and dongles',
  Exceptions: 'Unexpected failures recorded by the service',
  'Media gateway': 'WebRTC sessions with the Janus media gateway, for capture from a camera',
  'Dashboard proxy': 'The dashboard component, forwarded under /dashboard',
  'Login and tokens': 'Sign-in with a password, and the OAuth 2 token endpoint',
};

interface DocumentWithTags {
  paths?: object;
  tags?: { name: string; description?: string }[];
}

/** The document with a top-level `tags` list naming every tag its operations use. */
export function withDeclaredTags<T extends DocumentWithTags>(doc: T): T {
  const used = new Set<string>();
  for (const item of Object.values(doc.paths ?? {}) as object[])
    for (const operation of Object.values(item))
      for (const tag of (operation as { tags?: string[] } | null)?.tags ?? []) used.add(tag);
  const known = Object.keys(TAG_DESCRIPTIONS).filter((name) => used.has(name));
  const others = [...used].filter((name) => !(name in TAG_DESCRIPTIONS)).sort();
  return {
    ...doc,
    tags: [
      ...known.map((name) => ({ name, description: TAG_DESCRIPTIONS[name] })),
      ...others.map((name) => ({ name })),
    ],
  };
}
