// A person's account page: change the password (every other browser logged out), log out
// everywhere, the players blocked (unblock them), download the data, delete the account.
import { ApiError, api, el, forgetAccountSeats, toast } from "./common.js";
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const account = document.getElementById("account-bar")?.dataset.user || null;

function say(message) {
  $("settings-status").textContent = message;
}

function showError(box, message, field = null) {
  $(box).textContent = message;
  $(box).hidden = !message;
  if (field) {
    field.setAttribute("aria-invalid", "true");
    field.focus();
  }
}

/** The page is a guest's once the session ended: the header and the forms change. */
function loggedOut() {
  if (account) forgetAccountSeats(account);
  location.assign("/");
}

async function changePassword(event) {
  event.preventDefault();
  const old = $("old-password");
  const fresh = $("new-password");
  const again = $("new-password-again");
  for (const input of [old, fresh, again]) input.removeAttribute("aria-invalid");
  showError("password-error", "");
  if (!old.value) return showError("password-error", t("Type your password."), old);
  if (fresh.value.length < fresh.minLength || fresh.value.length > fresh.maxLength) {
    return showError("password-error", t("A password has {least} to {most} characters; this one has {count}.", { least: fresh.minLength, most: fresh.maxLength, count: fresh.value.length }), fresh);
  }
  if (fresh.value !== again.value) return showError("password-error", t("The two new passwords differ."), again);
  $("password-submit").disabled = true;
  try {
    const answer = await api("/api/account/password", { method: "POST", body: { old_password: old.value, new_password: fresh.value } });
    for (const input of [old, fresh, again]) input.value = "";
    say(answer.message);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    showError("password-error", err.message, err.code === "bad_password" && err.status === 403 ? old : err.code === "bad_password" ? fresh : null);
  } finally {
    $("password-submit").disabled = false;
  }
}

async function logoutEverywhere() {
  $("logout-everywhere").disabled = true;
  try {
    await api("/api/account/logout-everywhere", { method: "POST" });
    loggedOut();
  } catch (err) {
    toast(err.message);
    $("logout-everywhere").disabled = false;
  }
}

function showBlocks(blocks) {
  const list = $("blocks");
  list.replaceChildren(
    ...blocks.map((b) =>
      el(
        "li",
        { dataset: { name: b.name } },
        el("a", { href: `/players/${encodeURIComponent(b.name)}` }, b.name),
        " ",
        el("button", { type: "button", class: "secondary small-button", "aria-label": t("Unblock {name}", { name: b.name }), onclick: () => unblock(b.name) }, t("Unblock")),
      ),
    ),
  );
  list.setAttribute("aria-busy", "false");
  list.hidden = blocks.length === 0;
  $("blocks-empty").hidden = blocks.length !== 0;
}

async function unblock(name) {
  try {
    const answer = await api(`/api/account/blocks/${encodeURIComponent(name)}`, { method: "DELETE" });
    showBlocks(answer.blocks);
    say(t("You see {name}'s messages again.", { name }));
  } catch (err) {
    toast(err.message);
  }
}

async function deleteAccount(event) {
  event.preventDefault();
  const password = $("delete-password");
  showError("delete-error", "");
  if (!$("delete-confirm").checked) return showError("delete-error", t("Tick the box to confirm that the account is to be deleted."), $("delete-confirm"));
  if (!password.value) return showError("delete-error", t("Type your password."), password);
  $("delete-submit").disabled = true;
  try {
    await api("/api/account/delete", { method: "POST", body: { password: password.value } });
    loggedOut();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    showError("delete-error", err.message, err.code === "bad_password" ? password : null);
    $("delete-submit").disabled = false;
  }
}

if ($("password-form")) {
  $("password-form").addEventListener("submit", changePassword);
  $("logout-everywhere").addEventListener("click", logoutEverywhere);
  $("delete-form").addEventListener("submit", deleteAccount);
  api("/api/account/blocks").then((answer) => showBlocks(answer.blocks), (err) => toast(err.message));
}
document.body.dataset.ready = "true";
