// SpiderDuck web UI: the live list of processed URLs, and the admin forms' bearer token.
// Text from crawled pages is only ever set as textContent, never parsed as HTML.
"use strict";

function recentItem(item) {
  const li = document.createElement("li");
  const a = document.createElement("a");
  a.href = "/url?u=" + encodeURIComponent(item.url);
  a.textContent = item.title || item.url;
  const status = document.createElement("span");
  status.className = "status status-" + String(item.status).toLowerCase();
  status.textContent = item.status;
  const resolution = document.createElement("span");
  resolution.className = "resolution";
  resolution.textContent = item.resolution;
  const at = document.createElement("time");
  at.textContent = item.at;
  const url = document.createElement("div");
  url.className = "url";
  url.textContent = item.url;
  li.append(a, " ", status, " ", resolution, " ", at, url);
  return li;
}

function liveList() {
  const list = document.getElementById("recent");
  if (!list || !window.EventSource) return;
  const state = document.getElementById("live-state");
  const source = new EventSource("/events");
  source.onopen = () => { if (state) state.textContent = "live"; list.dataset.live = "open"; };
  source.onerror = () => { if (state) state.textContent = "reconnecting"; };
  source.onmessage = (message) => {
    const empty = document.getElementById("recent-empty");
    if (empty) empty.remove();
    list.prepend(recentItem(JSON.parse(message.data)));
    while (list.children.length > 50) list.lastElementChild.remove();
  };
}

function adminForms() {
  const token = document.getElementById("admin-token");
  if (token) {
    token.value = sessionStorage.getItem("spiderduck-admin-token") || "";
    token.addEventListener("change", () => sessionStorage.setItem("spiderduck-admin-token", token.value));
  }
  for (const form of document.querySelectorAll("form[data-admin]")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const output = form.querySelector("output");
      try {
        const response = await fetch(form.action, {
          method: "POST",
          headers: {"Authorization": "Bearer " + (token ? token.value : "")},
          body: new URLSearchParams(new FormData(form)),
        });
        const answer = await response.json();
        output.textContent = answer.message;
        output.className = answer.ok ? "ok" : "error";
      } catch (error) {
        output.textContent = "no answer: " + error;
        output.className = "error";
      }
    });
  }
}

document.addEventListener("DOMContentLoaded", () => { liveList(); adminForms(); });
