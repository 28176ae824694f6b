// Every page's header: the Log out button (the rest of the header is plain links, made by the server).
import { api, forgetAccountSeats, toast } from "./common.js";

const logout = document.getElementById("logout");
if (logout) {
  logout.addEventListener("click", async () => {
    logout.disabled = true;
    try {
      await api("/api/account/logout", { method: "POST" });
      // the seats stay the account's; this browser no longer holds them once nobody is logged in
      forgetAccountSeats(document.getElementById("account-name").textContent);
      location.reload();
    } catch (err) {
      toast(err.message);
      logout.disabled = false;
    }
  });
}
