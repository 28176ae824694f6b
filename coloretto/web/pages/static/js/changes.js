// The live protocol's changes (protocol 2): the server sends the whole view once, then what changed
// in it; the page puts the values where the paths say. The same as apply_change in
// coloretto/web/table/changes.py, which the tests check against the server's whole table.

/** The view a `change` message makes of `view` (a whole view, as a `state` message sent it);
 * `view` is left as it was. */
export function applyChange(view, change) {
  const result = structuredClone(view);
  for (const [path, value] of Object.entries(change.set ?? {})) {
    const [parent, key] = placeOf(result, path);
    parent[key] = value;
  }
  for (const path of change.unset ?? []) {
    const [parent, key] = placeOf(result, path);
    if (Array.isArray(parent)) parent.splice(key, 1);
    else delete parent[key];
  }
  if ("log" in change) result.log = result.log.slice(0, change.log_from).concat(change.log);
  return result;
}

/** The object or list a path's last step is in, and that step (a key, or an index). */
function placeOf(view, path) {
  const steps = path.split("/");
  const last = steps.pop();
  let place = view;
  for (const step of steps) place = Array.isArray(place) ? place[Number(step)] : place[step];
  return [place, Array.isArray(place) ? Number(last) : last];
}
