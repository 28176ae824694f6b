// The page of a one-time password reset link (/reset/TOKEN): the new password twice, then the log-in.
import { ApiError, api } from "./common.js";
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const form = $("reset-form");

function showError(message, field = null) {
  $("reset-error").textContent = message;
  $("reset-error").hidden = !message;
  if (field) field.focus();
}

async function send(event) {
  event.preventDefault();
  const password = $("reset-password");
  const again = $("reset-again");
  if (password.value.length < password.minLength || password.value.length > password.maxLength) {
    return showError(t("A password has {least} to {most} characters; this one has {count}.", { least: password.minLength, most: password.maxLength, count: password.value.length }), password);
  }
  if (password.value !== again.value) return showError(t("The two new passwords differ."), again);
  showError("");
  $("reset-submit").disabled = true;
  const token = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1] || "");
  try {
    await api("/api/account/reset", { method: "POST", body: { token, password: password.value } });
    form.hidden = true;
    $("reset-done").hidden = false;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    showError(err.message, err.code === "bad_password" ? password : null);
    $("reset-submit").disabled = false;
  }
}

if (form) form.addEventListener("submit", send);
document.body.dataset.ready = "true";
