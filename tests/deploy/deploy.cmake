# The deploy checks that run tools rather than GoogleTest: each a script that exits 77 (shown as skipped, with its
# reason) where its tool is missing. Fast: no container is built, nothing is installed on the machine.
set(LT_DEPLOY_TESTS ${CMAKE_CURRENT_LIST_DIR})
add_test(NAME deploy.systemd_units
         COMMAND ${LT_DEPLOY_TESTS}/systemd_check.sh ${PROJECT_SOURCE_DIR} $<TARGET_FILE:lane-tune>
                 ${PROJECT_BINARY_DIR}/test-tmp/systemd)
add_test(NAME deploy.deb COMMAND ${LT_DEPLOY_TESTS}/deb_check.sh ${CMAKE_CPACK_COMMAND} ${PROJECT_BINARY_DIR}
                                 ${PROJECT_BINARY_DIR}/test-tmp/deb)
add_test(NAME deploy.slurm COMMAND ${LT_DEPLOY_TESTS}/slurm_check.sh ${PROJECT_SOURCE_DIR}
                                   ${PROJECT_BINARY_DIR}/test-tmp/slurm)
add_test(NAME deploy.kustomize COMMAND ${LT_DEPLOY_TESTS}/kustomize_check.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(deploy.systemd_units deploy.deb deploy.slurm deploy.kustomize PROPERTIES SKIP_RETURN_CODE 77
                                                                                             TIMEOUT 300)
