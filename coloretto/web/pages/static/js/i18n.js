// The page's language: t("English text {field}", {field: 1}) and tn(singular, plural, n) look the
// English up in the page language's gettext catalogue, the server's own (served as JSON by
// /api/i18n/{lang}, named by the page's <meta name="coloretto-i18n">), so that the server and the
// browser speak from one catalogue. Numbers, percentages and dates are written as the language
// writes them (Intl). An English msgid with no translation is shown as it is.

/** The page's language, as the server chose it (the lang cookie, else Accept-Language). */
export const lang = document.documentElement.lang || "en";

let catalogue = { messages: {}, plural: {} };
const source = document.querySelector('meta[name="coloretto-i18n"]')?.content;
if (source && lang !== "en") {
  try {
    const response = await fetch(source);
    if (response.ok) catalogue = await response.json();
  } catch {
    // the catalogue could not be read: the page's own text is translated, the rest stays English
  }
}

const numbers = new Intl.NumberFormat(lang, { maximumFractionDigits: 3, useGrouping: "min2" });
const pluralRules = new Intl.PluralRules(lang);

/** A field's value as text: numbers in the language's way ("2,5" in Dutch). */
function shown(value) {
  return typeof value === "number" ? numbers.format(value) : String(value);
}

/** Fills ``{name}`` fields as Python's str.format does (``{{`` and ``}}`` are braces). */
function fill(text, fields) {
  if (!fields || !Object.keys(fields).length) return text;
  return text.replace(/\{\{|\}\}|\{(\w+)\}/g, (whole, name) => {
    if (whole === "{{") return "{";
    if (whole === "}}") return "}";
    return Object.prototype.hasOwnProperty.call(fields, name) ? shown(fields[name]) : whole;
  });
}

/** ``msgid`` (English) in the page's language, its ``{fields}`` filled. */
export function t(msgid, fields) {
  const text = catalogue.messages[msgid];
  return fill(typeof text === "string" && text ? text : msgid, fields);
}

/** The plural form of ``singular``/``plural`` for ``n`` by the language's own rules (French: "0
 * point"); ``{n}`` and the other fields filled. */
export function tn(singular, plural, n, fields = {}) {
  return fill(pluralText(singular, plural, n, pluralRules.select(n)), { n, ...fields });
}

/** ``tn`` for a number written with ``digits`` decimals, ``{n}`` written so ("27.8 points"), its
 * form chosen for that written number as the language does (English: "1.0 points"). */
export function tnDecimal(singular, plural, x, digits, fields = {}) {
  const rules = new Intl.PluralRules(lang, { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return fill(pluralText(singular, plural, x, rules.select(x)), { ...fields, n: num(x, digits) });
}

function pluralText(singular, plural, n, category) {
  const forms = catalogue.messages[singular];
  let text = n === 1 && category === "one" ? singular : plural;
  if (Array.isArray(forms)) {
    const form = catalogue.plural[category];
    if (form !== undefined && forms[form]) text = forms[form];
  }
  return text;
}

/** A number with ``digits`` decimals, as the language writes it (replaces toFixed). */
export function num(x, digits = 0) {
  return new Intl.NumberFormat(lang, { minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: "min2" }).format(x);
}

/** 0.413 -> "41%" (as the language writes a percentage, with ``digits`` decimals); signed: +0.08 ->
 * "+8%", -0.2 -> "−20%", 0 -> "±0%". */
export function pct(x, { signed = false, digits = 0 } = {}) {
  const scale = 10 ** digits;
  const value = Math.round(x * 100 * scale) / scale;
  const text = new Intl.NumberFormat(lang, { style: "percent", minimumFractionDigits: digits, maximumFractionDigits: digits }).format(Math.abs(value) / 100);
  if (!signed) return value < 0 ? `−${text}` : text;
  if (value === 0) return `±${text}`;
  return value > 0 ? `+${text}` : `−${text}`;
}

/** A moment (ISO text) as the language writes a date and time. */
export function dateTime(iso) {
  const moment = new Date(iso);
  if (Number.isNaN(moment.getTime())) return "";
  return new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "short" }).format(moment);
}

/** A list as the language writes one: "Ann, Bob and Cy" ("Ann, Bob en Cy"). */
export function list(items, type = "conjunction") {
  return new Intl.ListFormat(lang, { style: "long", type }).format(items.map(String));
}

/** A card legend (the state's ``cards``) with each card's name in the page's language. */
export function translatedLegend(cards) {
  return cards.map((card) => ({ ...card, name: t(card.name) }));
}
