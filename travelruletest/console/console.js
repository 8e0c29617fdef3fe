// The sandbox console's script: it keeps the page live. The server renders
// every part of the page (html/template escapes what it shows); this
// script only swaps the parts it renders anew when the sandbox changes,
// and sends the page's forms without leaving it. Without it the page still
// works: reload to update, and the forms post and come back.
"use strict";

(() => {
  const live = document.getElementById("live");
  const notice = document.getElementById("notice");
  const parts = ["list", "detail", "settings", "controls"];
  const shown = new Map(); // the HTML each part holds
  let busy = false;
  let again = false;

  document.documentElement.classList.add("js");

  // say shows msg in the notice, which screen readers announce.
  function say(msg, bad) {
    notice.textContent = msg;
    notice.classList.toggle("bad", Boolean(bad));
  }

  // refresh renders the parts anew for the view in the address bar; a
  // refresh asked for while one runs runs once it ends.
  async function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      const resp = await fetch("/console/live" + location.search, {
        headers: { Accept: "application/json" },
        cache: "no-store",
      });
      if (!resp.ok) {
        throw new Error((await resp.text()).trim() || resp.statusText);
      }
      const data = await resp.json();
      for (const id of parts) {
        swap(id, data[id]);
      }
      document.body.dataset.version = String(data.version);
    } catch (err) {
      say("Could not update the page: " + err.message, true);
    } finally {
      busy = false;
      if (again) {
        again = false;
        refresh();
      }
    }
  }

  // editing reports whether the person is changing a form of el: one they
  // typed in and have not sent, or a field of it that has the focus. Such a
  // part is not swapped, so that nothing they type is lost.
  function editing(el) {
    const active = document.activeElement;
    return Boolean(el.querySelector("form.dirty")) ||
      (active && el.contains(active) && active.matches("textarea, select, input"));
  }

  // swap puts html into the element id if it changed, keeping the focus on
  // the element of the same id.
  function swap(id, html) {
    const el = document.getElementById(id);
    if (!el || typeof html !== "string" || shown.get(id) === html || editing(el)) {
      return;
    }
    const active = document.activeElement;
    const focused = active && el.contains(active) ? active.id : "";
    el.innerHTML = html;
    shown.set(id, html);
    if (focused) {
      const again = document.getElementById(focused);
      if (again) {
        again.focus();
      }
    }
  }

  // show opens the transfer id ("" closes it) without leaving the page.
  function show(id) {
    const q = new URLSearchParams(location.search);
    if (id) {
      q.set("transfer", id);
    } else {
      q.delete("transfer");
    }
    const s = q.toString();
    history.pushState(null, "", s ? "/?" + s : "/");
    refresh().then(() => {
      const target = document.getElementById(id ? "detail" : "transfers");
      if (target) {
        target.focus();
      }
    });
  }

  document.addEventListener("click", (e) => {
    const a = e.target.closest("a[data-transfer]");
    if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) {
      return;
    }
    e.preventDefault();
    show(a.dataset.transfer);
  });

  // After Back or Forward the reveal switch follows the address.
  window.addEventListener("popstate", () => {
    document.getElementById("reveal").checked = new URLSearchParams(location.search).get("reveal") === "1";
    refresh();
  });

  // A form typed in is not swapped until it is sent.
  document.addEventListener("input", (e) => {
    const form = e.target.closest("form[data-live]");
    if (form) {
      form.classList.add("dirty");
    }
  });

  document.getElementById("reveal").addEventListener("change", (e) => {
    const q = new URLSearchParams(location.search);
    if (e.target.checked) {
      q.set("reveal", "1");
    } else {
      q.delete("reveal");
    }
    const s = q.toString();
    history.replaceState(null, "", s ? "/?" + s : "/");
    refresh();
  });

  // The forms that change the sandbox are sent from here: the answer is
  // a line to show, and the page updates.
  document.addEventListener("submit", async (e) => {
    const form = e.target;
    if (!form.matches("form[data-live]")) {
      return;
    }
    e.preventDefault();
    const body = new URLSearchParams(new FormData(form, e.submitter));
    // The view now, not the one the page was served with.
    body.delete("transfer");
    body.delete("reveal");
    const section = form.closest("section");
    try {
      const resp = await fetch(form.action, {
        method: "POST",
        body,
        headers: { Accept: "text/plain" },
      });
      say((await resp.text()).trim(), !resp.ok);
      if (resp.ok) {
        form.classList.remove("dirty");
      }
    } catch (err) {
      say("Could not send: " + err.message, true);
    }
    await refresh();
    // A button the update took away (Approve, once decided) leaves the
    // focus on its section.
    if (section && (!document.activeElement || document.activeElement === document.body)) {
      section.focus();
    }
  });

  for (const id of parts) {
    const el = document.getElementById(id);
    shown.set(id, el ? el.innerHTML : "");
  }

  // poll updates the page every 2 seconds, where no event stream can be
  // had: no EventSource, or the sandbox refused one (too many pages open).
  let polling = false;
  function poll() {
    if (polling) {
      return;
    }
    polling = true;
    live.textContent = "Updating every 2 seconds";
    live.classList.remove("bad");
    setInterval(refresh, 2000);
  }

  if (!window.EventSource) {
    poll();
    return;
  }
  // Each page holds one event stream while it is visible: a browser opens
  // at most six connections to a host over HTTP/1.1, and streams of tabs
  // in the background would leave none for the page in front.
  let events = null;
  function listen() {
    if (events) {
      return;
    }
    events = new EventSource("/console/events");
    events.onopen = () => {
      live.textContent = "Live";
      live.classList.remove("bad");
    };
    events.onmessage = (e) => {
      if (document.body.dataset.version !== e.data) {
        refresh();
      }
    };
    events.onerror = (e) => {
      if (e.target.readyState === EventSource.CLOSED) {
        if (events === e.target) {
          events = null;
        }
        poll();
        return;
      }
      live.textContent = "Reconnecting…";
      live.classList.add("bad");
    };
  }
  function unlisten() {
    if (events) {
      events.close();
      events = null;
      live.textContent = "Paused while hidden";
    }
  }
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") {
      unlisten();
    } else if (!polling) {
      listen();
      refresh();
    }
  });
  window.addEventListener("pagehide", unlisten);
  window.addEventListener("pageshow", (e) => {
    if (e.persisted && !polling) {
      listen();
      refresh();
    }
  });
  listen();
})();
