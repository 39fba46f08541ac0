# lt_db's links: SQLite through pkg-config, nlohmann-json for the stored JSON columns.
target_link_libraries(lt_db PUBLIC PkgConfig::SQLITE3 nlohmann_json::nlohmann_json)
