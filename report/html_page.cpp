#include "report/html_page.h"

#include <cctype>
#include <cstring>

#include "report/svg_plot.h"

namespace sfumato::report {

namespace {

const char* kStyle = R"(
body { font-family: sans-serif; margin: 1.2em 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; } th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.bad { color: #b00; }
.wide { overflow-x: auto; max-width: 100%; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
svg.plot { background: #fff; border: 1px solid #ddd; }
svg text { font-size: 11px; fill: #333; } svg text.title { font-size: 13px; font-weight: bold; }
svg .frame { fill: none; stroke: #888; } svg .grid { stroke: #eee; }
svg .line { fill: none; stroke-width: 1.5; } svg .ref { stroke: #555; stroke-width: 1.5; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; font-size: 0.9em; }
dt { font-weight: bold; } dd { margin: 0; }
#selfcheck, #errors { font-size: 0.8em; color: #666; margin-top: 2em; }
pre { font-size: 0.8em; white-space: pre-wrap; }
)";

// Runs after the page has loaded (no network, no libraries).
const char* kScript = R"(
(function () {
  var errors = [];
  function show() {
    var e = document.getElementById('errors');
    if (!e) return;
    e.setAttribute('data-count', String(errors.length));
    e.textContent = errors.length ? 'page errors: ' + errors.join(' | ') : 'page errors: none';
  }
  window.addEventListener('error', function (ev) { errors.push(String(ev.message)); show(); });
  window.addEventListener('load', function () {
    var plots = document.querySelectorAll('svg.plot');
    var bad = [];
    for (var i = 0; i < plots.length; i++) {
      var svg = plots[i];
      var want = parseInt(svg.getAttribute('data-expected-marks') || '0', 10);
      var got = svg.querySelectorAll('.mark').length;
      var box = svg.getBBox();
      var drawn = 0;
      var marks = svg.querySelectorAll('.mark');
      for (var k = 0; k < marks.length; k++) {
        var b = marks[k].getBBox();
        if (b.width > 0 && b.height > 0 && isFinite(b.x) && isFinite(b.y)) drawn++;
      }
      if (!(want > 0 && got === want && drawn === want && box.width > 0 && box.height > 0))
        bad.push(svg.id + ' (' + drawn + ' of ' + want + ' marks drawn)');
    }
    var sc = document.getElementById('selfcheck');
    sc.setAttribute('data-plots', String(plots.length));
    sc.setAttribute('data-status', bad.length ? 'fail' : 'ok');
    sc.textContent = 'self-check: ' + plots.length + ' plots, ' + (bad.length ? 'incomplete: ' + bad.join(', ') : 'all rendered');
    show();
    console.log('sfumato report self-check: ' + sc.getAttribute('data-status'));
  });
})();
)";

bool numeric(const std::string& s) {
    if (s.empty()) return false;
    size_t digits = 0;
    for (char c : s) {
        if (std::isdigit(static_cast<unsigned char>(c))) ++digits;
        else if (!std::strchr("+-.eEkMGTP%", c)) return false;
    }
    return digits > 0;
}

}  // namespace

std::string html_escape(const std::string& s) { return xml_escape(s); }

void HtmlPage::close_plots() {
    if (m_in_plots) m_body += "</div>\n";
    m_in_plots = false;
}

void HtmlPage::heading(const std::string& text, int level) {
    close_plots();
    const std::string h = "h" + std::to_string(level);
    m_body += "<" + h + ">" + html_escape(text) + "</" + h + ">\n";
}

void HtmlPage::paragraph(const std::string& text) {
    close_plots();
    m_body += "<p>" + html_escape(text) + "</p>\n";
}

void HtmlPage::raw(const std::string& html) {
    close_plots();
    m_body += html;
}

void HtmlPage::table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows, bool wide) {
    close_plots();
    std::string t = wide ? "<div class=\"wide\"><table>\n<tr>" : "<table>\n<tr>";
    for (const auto& h : header) t += "<th>" + html_escape(h) + "</th>";
    t += "</tr>\n";
    for (const auto& r : rows) {
        t += "<tr>";
        for (const auto& c : r) {
            if (c.find('\n') != std::string::npos) t += "<td><pre>" + html_escape(c) + "</pre></td>";
            else t += std::string(numeric(c) ? "<td class=\"num\">" : "<td>") + html_escape(c) + "</td>";
        }
        t += "</tr>\n";
    }
    t += wide ? "</table></div>\n" : "</table>\n";
    m_body += t;
}

void HtmlPage::plot(const std::string& svg) {
    if (!m_in_plots) m_body += "<div class=\"plots\">\n";
    m_in_plots = true;
    m_body += svg;
    ++m_plots;
}

void HtmlPage::definition_list(const std::vector<std::pair<std::string, std::string>>& items) {
    close_plots();
    m_body += "<dl>\n";
    for (const auto& [k, v] : items) m_body += "<dt>" + html_escape(k) + "</dt><dd>" + html_escape(v) + "</dd>\n";
    m_body += "</dl>\n";
}

std::string HtmlPage::render() const {
    std::string body = m_body;
    if (m_in_plots) body += "</div>\n";
    return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + html_escape(m_title) +
           "</title>\n<style>" + kStyle + "</style>\n<script>" + kScript + "</script>\n</head>\n<body>\n<h1>" +
           html_escape(m_title) + "</h1>\n" + body +
           "<div id=\"selfcheck\" data-status=\"pending\" data-plots=\"0\">self-check: not run (scripts disabled?)</div>\n"
           "<div id=\"errors\" data-count=\"0\"></div>\n</body>\n</html>\n";
}

}  // namespace sfumato::report
