// Telling a player it is their turn: the tab's title (seen from another tab too) and, if they
// switched it on, a short sound made with Web Audio (no file to load). Spectators get neither.
import { t } from "./i18n.js";

const SOUND_KEY = "coloretto.sound";

export function soundWanted() {
  try { return localStorage.getItem(SOUND_KEY) === "1"; } catch { return false; }
}

export function setSoundWanted(on) {
  try {
    if (on) localStorage.setItem(SOUND_KEY, "1");
    else localStorage.removeItem(SOUND_KEY);
  } catch { /* private browsing: for this page only */ }
}

let audio = null;

/** The audio context, made (or resumed) in a click or key press: browsers let a page play sound
 * only once a person has done something on it. */
export function unlockAudio() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return null;
  if (!audio) audio = new Context();
  if (audio.state === "suspended") audio.resume().catch(() => {});
  return audio;
}

/** Two short rising notes, a quarter of a second in all, quiet. */
export function chime() {
  const context = unlockAudio();
  if (!context) return;
  const start = context.currentTime + 0.01;
  [660, 880].forEach((frequency, i) => {
    const osc = context.createOscillator();
    const gain = context.createGain();
    osc.type = "sine";
    osc.frequency.value = frequency;
    const at = start + i * 0.12;
    gain.gain.setValueAtTime(0.0001, at);
    gain.gain.exponentialRampToValueAtTime(0.15, at + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, at + 0.11);
    osc.connect(gain).connect(context.destination);
    osc.start(at);
    osc.stop(at + 0.12);
  });
}

/** Keeps the title and the sound in step with the table: ``update(mine, name)`` after every state,
 * ``mine`` whether it is this page's seat to move. The sound plays when a turn becomes yours, not on
 * every state of it, and never on the first state a page gets (a reload is no news). */
export function turnNotifier() {
  let wasMine = null;
  return {
    update(mine, gameName) {
      document.title = mine ? t("● Your turn — Coloretto") : t("Coloretto — {name}", { name: gameName });
      if (mine && wasMine === false && soundWanted()) chime();
      wasMine = mine;
    },
  };
}
