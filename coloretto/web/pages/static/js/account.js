// The log-in and sign-up pages: one form each, the server's errors shown beside it (a name taken, a
// wrong password, too many attempts with the time left to wait), then back to the page the person
// came from.
import { ApiError, api } from "./common.js";
import { t, tn } from "./i18n.js";

const form = document.getElementById("account-form");
const mode = form.dataset.mode; // "login" or "signup"
const nameInput = document.getElementById("account-name-input");
const passwordInput = document.getElementById("account-password");
const submit = document.getElementById("account-submit");
const errorBox = document.getElementById("account-error");
const PASSWORD_MIN = Number(passwordInput.minLength);
const PASSWORD_MAX = Number(passwordInput.maxLength);

let waitTimer = null;

/** Where to go once logged in: the server checked it is a path of this site; checked again here. */
function next() {
  const target = form.dataset.next || "/";
  return target.startsWith("/") && !target.startsWith("//") && !target.includes("\\") ? target : "/";
}

function showError(message, field = null) {
  errorBox.replaceChildren(message);
  errorBox.hidden = false;
  for (const input of [nameInput, passwordInput]) {
    if (input === field) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }
  if (field) field.focus();
}

function clearError() {
  errorBox.hidden = true;
  errorBox.replaceChildren();
  nameInput.removeAttribute("aria-invalid");
  passwordInput.removeAttribute("aria-invalid");
}

/** Too many attempts: the server's message, then a countdown of the wait; the button comes back at its end. */
function showWait(message, seconds) {
  clearInterval(waitTimer);
  const until = Date.now() + seconds * 1000;
  const left = document.createElement("span");
  left.id = "account-wait";
  // the countdown is a timer (role timer is not read out each second): the alert said the wait once
  left.setAttribute("role", "timer");
  const tick = () => {
    const remaining = Math.max(0, Math.ceil((until - Date.now()) / 1000));
    left.dataset.seconds = String(remaining);
    left.textContent = remaining > 0 ? tn("You can try again in {n} second.", "You can try again in {n} seconds.", remaining) : t("You can try again now.");
    if (remaining === 0) {
      clearInterval(waitTimer);
      submit.disabled = false;
    }
  };
  errorBox.replaceChildren(message, " ", left);
  errorBox.hidden = false;
  submit.disabled = true;
  tick();
  waitTimer = setInterval(tick, 1000);
}

/** The form's own checks, before the server's: the same rules, said at once and for the field. */
function checkFields(name, password) {
  if (!name) return [nameInput, t("Type your name.")];
  if (!password) return [passwordInput, t("Type your password.")];
  if (mode === "signup" && (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX)) {
    return [passwordInput, t("A password has {least} to {most} characters; this one has {count}.", { least: PASSWORD_MIN, most: PASSWORD_MAX, count: password.length })];
  }
  return null;
}

async function send(event) {
  event.preventDefault();
  if (submit.disabled) return;
  const name = nameInput.value.trim();
  const password = passwordInput.value;
  const problem = checkFields(name, password);
  if (problem) {
    showError(problem[1], problem[0]);
    return;
  }
  clearError();
  submit.disabled = true;
  form.setAttribute("aria-busy", "true");
  let waiting = false;
  try {
    await api(`/api/account/${mode}`, { method: "POST", body: { name, password } });
    location.assign(next());
    return;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (err.retryAfter && (err.code === "too_many_logins" || err.code === "too_many_signups" || err.code === "busy")) {
      waiting = true;
      showWait(err.message, err.retryAfter);
    } else if (err.code === "name_taken" || err.code === "bad_name") {
      showError(err.message, nameInput);
    } else if (err.code === "bad_password" || err.code === "bad_login") {
      showError(err.message, passwordInput);
    } else {
      showError(err.message);
    }
  } finally {
    form.removeAttribute("aria-busy");
    if (!waiting) submit.disabled = false;
  }
}

form.addEventListener("submit", send);
form.dataset.ready = "true";
