// What the build embedded for `lane-tune report` (cli/report/embed.cmake): the page's template and Chart.js.
#pragma once

#include <string_view>

namespace lt::cli::embedded {

// cli/report/page.html: the page with its styles and drawing script, and the markers report_page fills.
std::string_view page_template();
// Chart.js 3 (chart.min.js, MIT) as Debian's libjs-chart.js installs it; empty when the build found none.
std::string_view chartjs();

}  // namespace lt::cli::embedded
