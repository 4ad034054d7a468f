// The panel's page elements by id: a missing one is a bug in panelHtml.ts, so it throws.

export function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) {
    throw new Error(`missing #${id}`);
  }
  return el as T;
}
