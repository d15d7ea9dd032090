// One self-contained HTML page (inline CSS, inline SVG, one small inline script; nothing
// fetched from the network). The script checks the page once it has loaded: every <svg
// class="plot"> must have drawn the marks it declares (data-expected-marks, at least one) with
// a non-empty bounding box; the outcome goes into <div id="selfcheck" data-status="ok|fail"
// data-plots="N">, and any script error on the page into <div id="errors" data-count="N">, so a
// headless browser's DOM dump tells whether the report rendered.
#pragma once
#include <string>
#include <vector>

namespace sfumato::report {

class HtmlPage {
public:
    explicit HtmlPage(std::string title) : m_title(std::move(title)) {}
    void heading(const std::string& text, int level = 2);
    void paragraph(const std::string& text);  // escaped
    void raw(const std::string& html);
    // A table; numeric-looking cells are right-aligned. `wide` puts it in a scrolling box.
    void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows, bool wide = false);
    void plot(const std::string& svg);  // plots flow side by side
    void definition_list(const std::vector<std::pair<std::string, std::string>>& items);
    size_t plots() const { return m_plots; }
    std::string render() const;

private:
    void close_plots();
    std::string m_title;
    std::string m_body;
    bool m_in_plots = false;
    size_t m_plots = 0;
};

std::string html_escape(const std::string& s);

}  // namespace sfumato::report
