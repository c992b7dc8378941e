! placeholder
program test_gd_f
  stop 77
end program test_gd_f
